package sqlfront

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// The key golden fixture: tables covering every keyable column type, NULLs,
// case-insensitive, binary and PAD SPACE collations, prefixes and composite
// keys. testdata/keys.golden holds, for every stored row, the primary key,
// the row bytes and every secondary index key as the closure-based code
// (IndexSpec.Key built by sqlfront, before storage.TableDesc existed)
// produced them. Rows and keys are in existing logs and checkpoints, so the
// descriptor path must reproduce them byte for byte.

var keyFixtureSQL = []string{
	"SET time_zone = '+00:00'",
	"CREATE DATABASE keyfix COLLATE utf8mb4_0900_bin", // the golden keys were made under the binary default
	`CREATE TABLE keyfix.kt (
		id BIGINT NOT NULL,
		s2 VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL,
		i8 TINYINT, i16 SMALLINT, i24 MEDIUMINT, i32 INT, i64 BIGINT,
		u8 TINYINT UNSIGNED, u16 SMALLINT UNSIGNED, u24 MEDIUMINT UNSIGNED, u32 INT UNSIGNED, u64 BIGINT UNSIGNED,
		bo BOOLEAN, f32 FLOAT, f64 DOUBLE, de DECIMAL(20,6),
		c_ai VARCHAR(40) COLLATE utf8mb4_0900_ai_ci,
		c_gen VARCHAR(40) COLLATE utf8mb4_general_ci,
		c_bin VARCHAR(40) COLLATE utf8mb4_bin,
		c_0bin VARCHAR(40) COLLATE utf8mb4_0900_bin,
		c_lat CHAR(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci,
		c_uni VARCHAR(40) COLLATE utf8mb4_unicode_ci,
		tx TEXT, bl BLOB, vb VARBINARY(30), bn BINARY(4),
		en ENUM('x','y','z'), st SET('a','b','c'), bt BIT(10), yr YEAR,
		dt DATE, dtm DATETIME(6), ts TIMESTAMP(3), tm TIME(6),
		js JSON,
		PRIMARY KEY (id, s2),
		UNIQUE KEY u_i32 (i32), KEY k_ints (i8, i16, i24, i64), KEY k_uns (u8, u16, u24, u32, u64),
		KEY k_bo (bo), KEY k_f (f32, f64), UNIQUE KEY u_de (de),
		KEY k_ai (c_ai), KEY k_gen (c_gen), UNIQUE KEY u_bin (c_bin), KEY k_0bin (c_0bin),
		KEY k_lat (c_lat), KEY k_uni (c_uni),
		KEY k_pfx (c_ai(3), c_gen(2)), KEY k_tx (tx(10)), KEY k_bl (bl(4)), KEY k_vb (vb), KEY k_bn (bn),
		KEY k_en (en, st), KEY k_bt (bt, yr), KEY k_time (dt, dtm, ts, tm), KEY k_mix (c_bin(5), i64, de)
	)`,
	`INSERT INTO keyfix.kt VALUES
		(1, 'Abc', -128, -32768, -8388608, -2147483648, -9223372036854775808,
		 0, 0, 0, 0, 0, false, -1.5, -2.25e300, -12345.678900,
		 'Hello', 'hello  ', 'Hello  ', 'hello', 'Åsa', 'straße',
		 'text value longer than ten', x'00010203ff', x'00ff00', x'41420000',
		 'x', 'a,c', b'1010101010', 1901, '1000-01-01', '1000-01-01 00:00:00.000001', '1970-01-02 00:00:00.123', '-838:59:59.000000',
		 '{"a": [1, 2, {"b": null}]}'),
		(2, 'abc', 127, 32767, 8388607, 2147483647, 9223372036854775807,
		 255, 65535, 16777215, 4294967295, 18446744073709551615, true, 3.25, 1e-300, 99999999999999.999999,
		 'HELLO', 'HELLO', 'hello', 'Hello', 'asa', 'STRASSE',
		 '', x'', x'', x'00000000',
		 'z', 'b', b'0', 2155, '9999-12-31', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', '838:59:59.000000',
		 'null'),
		(3, 'ABC ', 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, NULL, -0.0, -0.0, 0.000000,
		 'héllo wörld 😀', 'Ǆemal', 'emoji 😀 ', '😀', 'ÿ', 'ﬁne',
		 'tab	and trailing  ', x'7a7a7a7a7a7a', x'0000', x'00',
		 'y', '', b'1111111111', 0, '2024-02-29', '2024-02-29 12:34:56', '2024-02-29 12:34:56.5', '00:00:00',
		 '[]'),
		(4, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		(5, 'x', NULL, 5, NULL, NULL, 7, NULL, 9, NULL, NULL, 10, true, 1e10, 123.5, 1.500000,
		 'a', 'A', 'a', 'A', 'b', 'B', 'prefix-only-differs-1', x'0102', x'01', x'01',
		 NULL, 'a,b,c', NULL, 2000, NULL, '2000-01-01 00:00:00', NULL, '-00:00:01.5', NULL),
		(6, 'y', NULL, 5, NULL, NULL, 7, NULL, 9, NULL, NULL, 11, false, -1e10, -123.5, -1.5,
		 'a ', 'a ', 'ab ', 'a ', 'b ', 'b ', 'prefix-only-differs-2', x'010203', x'0100', x'0100',
		 'x', 'a', b'1', 1999, '1999-12-31', NULL, '1999-12-31 23:59:59', '12:00:00', NULL)`,
	`CREATE TABLE keyfix.nopk (a INT, b VARCHAR(10) COLLATE utf8mb4_general_ci, c VARBINARY(8),
		KEY kb (b), UNIQUE KEY ua (a), KEY kcb (c, b(2)))`,
	`INSERT INTO keyfix.nopk VALUES (1, 'One', x'00'), (NULL, 'one ', NULL), (NULL, 'one ', NULL),
		(2, NULL, x'0000'), (3, 'Ⅻ', x'ff')`,
}

// keyFixtureTables are the fixture's tables, in golden-file order.
var keyFixtureTables = []string{"kt", "nopk"}

// loadKeyFixture runs the fixture SQL in a fresh frontend.
func loadKeyFixture(t *testing.T) *testFE {
	t.Helper()
	f := newTestFE(t)
	f.mustExec(f.ctx, keyFixtureSQL...)
	return f
}

// fixtureEntry returns the fixture table's catalog entry.
func fixtureEntry(t *testing.T, f *testFE, table string) *tableEntry {
	t.Helper()
	db := f.fe.provider.dbs["keyfix"]
	if db == nil || db.tables[table] == nil {
		t.Fatalf("fixture table keyfix.%s missing", table)
	}
	return db.tables[table]
}

// storedRows returns every (primary key, row) of the table, in key order.
func storedRows(t *testing.T, f *testFE, te *tableEntry) (pks, rows [][]byte) {
	t.Helper()
	tx := f.fe.store.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	err := tx.Scan(context.Background(), te.store, storage.PrimaryIndex, storage.Range{}, false, 0, func(pk, row []byte) (bool, error) {
		pks = append(pks, append([]byte(nil), pk...))
		rows = append(rows, append([]byte(nil), row...))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pks, rows
}

// goldenLine formats one golden-file line.
func goldenLine(kind string, fields ...interface{}) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, f := range fields {
		b.WriteByte(' ')
		switch x := f.(type) {
		case []byte:
			b.WriteString("0x" + hex.EncodeToString(x))
		default:
			fmt.Fprint(&b, x)
		}
	}
	return b.String()
}

// readKeyGolden returns testdata/keys.golden's lines.
func readKeyGolden(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/keys.golden")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// compareGolden reports the first differences between got and the golden
// file's lines.
func compareGolden(t *testing.T, got []string) {
	t.Helper()
	want := readKeyGolden(t)
	bad := 0
	for i := 0; i < max(len(got), len(want)) && bad < 10; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("line %d:\n got  %s\n want %s", i+1, g, w)
			bad++
		}
	}
}
