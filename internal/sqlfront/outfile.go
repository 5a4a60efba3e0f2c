package sqlfront

import (
	"bufio"
	"bytes"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// SELECT ... INTO OUTFILE and INTO DUMPFILE, in place of
// go-mysql-server's, which wrote wherever the process could (no FILE
// privilege, secure_file_priv compared as text) and held the whole result
// in memory first.
//
// The account needs FILE (1045 without it); the file is created under the
// file policy (fileaccess.go: 1290 outside it, 1086 if it exists) before
// the first row is read, and rows are written as they come, through a
// buffer. The text format is MySQL's: fields and lines terminated and
// started as the statement says; with a non-empty ESCAPED BY, NULL is \N
// and the escape character precedes itself, the ENCLOSED BY character, the
// first character of the field and line terminators when nothing encloses
// the field, and NUL (written as \0); OPTIONALLY ENCLOSED BY encloses only
// string columns. DUMPFILE writes one row's values with no separators and
// no escaping; a second row is 1172.

// buildInto runs an INTO OUTFILE or DUMPFILE.
func (fe *Frontend) buildInto(ctx *sql.Context, n *plan.Into, row sql.Row) (sql.RowIter, error) {
	if !fe.hasAnyPriv(ctx, sql.PrivilegeType_File) {
		return nil, fe.accessDeniedHere(ctx)
	}
	name := n.Outfile
	if name == "" {
		return fe.buildDumpfile(ctx, n, row)
	}
	f, err := fe.openServerFile(name, true)
	if err != nil {
		return nil, err
	}
	iter, err := fe.exec.Build(ctx, n.Child, row)
	if err != nil {
		f.Close()
		return nil, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	var count int
	if n.Outfile != "" {
		count, err = writeOutfile(ctx, w, n, iter)
	} else {
		count, err = writeDumpfile(ctx, w, n, iter)
	}
	if cerr := iter.Close(ctx); err == nil {
		err = cerr
	}
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = errCantOpen(name, true, ferr)
	}
	if ferr := f.Close(); err == nil && ferr != nil {
		err = errCantOpen(name, true, ferr)
	}
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(sql.Row{types.NewOkResult(count)}), nil
}

// columnType is the type of the result's column i (LONGTEXT past the
// schema).
func columnType(sch sql.Schema, i int) sql.Type {
	if i < len(sch) {
		return sch[i].Type
	}
	return types.LongText
}

// fieldText is v as MySQL writes it in a result set: its column type's
// text.
func fieldText(ctx *sql.Context, t sql.Type, v any) ([]byte, error) {
	sv, err := t.SQL(ctx, nil, v)
	if err != nil {
		return nil, err
	}
	return sv.ToBytes(), nil
}

func writeOutfile(ctx *sql.Context, w io.Writer, n *plan.Into, iter sql.RowIter) (int, error) {
	sch := n.Child.Schema()
	esc := n.FieldsEscapedBy
	enc := n.FieldsEnclosedBy
	// The characters the escape character precedes.
	special := [256]bool{}
	if esc != "" {
		special[esc[0]] = true
		if enc != "" {
			special[enc[0]] = true
		}
		special[0] = true
	}
	var buf []byte
	count := 0
	for {
		if err := ctx.Err(); err != nil {
			return count, err
		}
		r, err := iter.Next(ctx)
		if err == io.EOF {
			return count, nil
		}
		if err != nil {
			return count, err
		}
		buf = append(buf[:0], n.LinesStartingBy...)
		for i, v := range r {
			if i > 0 {
				buf = append(buf, n.FieldsTerminatedBy...)
			}
			if v == nil {
				if esc == "" {
					buf = append(buf, "NULL"...)
				} else {
					buf = append(buf, esc[0], 'N')
				}
				continue
			}
			t := columnType(sch, i)
			text, err := fieldText(ctx, t, v)
			if err != nil {
				return count, err
			}
			enclose := enc != "" && (!n.FieldsEnclosedByOpt || types.IsText(t) || types.IsBinaryType(t) || types.IsEnum(t) || types.IsSet(t))
			if enclose {
				buf = append(buf, enc...)
			}
			buf = appendEscaped(buf, text, esc, &special, enclose, n.FieldsTerminatedBy, n.LinesTerminatedBy)
			if enclose {
				buf = append(buf, enc...)
			}
		}
		buf = append(buf, n.LinesTerminatedBy...)
		if _, err := w.Write(buf); err != nil {
			return count, err
		}
		count++
	}
}

// appendEscaped appends text to buf with MySQL's OUTFILE escaping.
func appendEscaped(buf, text []byte, esc string, special *[256]bool, enclosed bool, fieldTerm, lineTerm string) []byte {
	if esc == "" {
		return append(buf, text...)
	}
	for _, c := range text {
		isSpecial := special[c]
		if !enclosed && !isSpecial {
			isSpecial = (fieldTerm != "" && c == fieldTerm[0]) || (lineTerm != "" && c == lineTerm[0])
		}
		if isSpecial {
			buf = append(buf, esc[0])
			if c == 0 {
				c = '0'
			}
		}
		buf = append(buf, c)
	}
	return buf
}

func writeDumpfile(ctx *sql.Context, w io.Writer, n *plan.Into, iter sql.RowIter) (int, error) {
	sch := n.Child.Schema()
	count := 0
	var buf bytes.Buffer
	for {
		if err := ctx.Err(); err != nil {
			return count, err
		}
		r, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return count, err
		}
		count++
		if count > 1 {
			return count, sql.ErrMoreThanOneRow.New() // 1172 by the server's error map
		}
		for i, v := range r {
			if v == nil {
				continue
			}
			text, err := fieldText(ctx, columnType(sch, i), v)
			if err != nil {
				return count, err
			}
			buf.Write(text)
		}
	}
	_, err := w.Write(buf.Bytes())
	return count, err
}

// buildDumpfile runs an INTO DUMPFILE: the one row is read first, so a
// second row is 1172 before any file is made.
func (fe *Frontend) buildDumpfile(ctx *sql.Context, n *plan.Into, row sql.Row) (sql.RowIter, error) {
	iter, err := fe.exec.Build(ctx, n.Child, row)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	count, err := writeDumpfile(ctx, &buf, n, iter)
	if cerr := iter.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	f, err := fe.openServerFile(n.Dumpfile, true)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return nil, errCantOpen(n.Dumpfile, true, err)
	}
	if err := f.Close(); err != nil {
		return nil, errCantOpen(n.Dumpfile, true, err)
	}
	return sql.RowsToRowIter(sql.Row{types.NewOkResult(count)}), nil
}
