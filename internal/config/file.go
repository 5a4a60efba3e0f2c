package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Option files use MySQL's format:
//
//	# comment            ; comment too
//	[lockstep]           # section header
//	datadir = /var/lib/lockstep
//	port=3307
//	bind_address = "0.0.0.0"    # '_' and '-' are the same in names
//	password = 'p#ss'           # quote values that contain '#'
//
// Rules:
//   - Lines outside any section, and lines in [lockstep], [mysqld] or [server],
//     are read; every other section (e.g. [client], [mysql]) is skipped whole.
//   - Each option line is "name = value" (spaces around '=' optional). Names
//     are the flag names without "--"; case and '_' versus '-' do not matter.
//   - '#' outside quotes starts a comment anywhere on a line; ';' only at the
//     start of a line.
//   - A value may be wrapped in one pair of single or double quotes, which are
//     removed. Backslash escapes are not interpreted.
//   - An unknown name is an error, except with MySQL's "loose-" prefix
//     (loose-foo = 1), which is ignored when unknown.
//   - The last occurrence of an option wins.
//   - !include and !includedir are not supported.

// readSections are the option-file sections lockstep reads; "" is the part of
// the file before the first section header.
var readSections = map[string]bool{"": true, "lockstep": true, "mysqld": true, "server": true}

// LoadFile applies the options in the option file at path on top of *into.
// Errors name the file and line. On error *into is left unchanged.
func LoadFile(path string, into *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file %s: %v", path, cause(err))
	}
	return Parse(bytes.NewReader(data), path, into)
}

// Parse is LoadFile for an already open option file; name is used in errors.
func Parse(r io.Reader, name string, into *Config) error {
	c := *into
	section := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\ufeff") // UTF-8 byte order mark
		}
		if err := parseLine(&c, &section, line); err != nil {
			return fmt.Errorf("%s:%d: %v", name, lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %v", name, lineNo+1, err)
	}
	*into = c
	return nil
}

func parseLine(c *Config, section *string, raw string) error {
	line := strings.TrimSpace(raw)
	if line == "" || line[0] == '#' || line[0] == ';' {
		return nil
	}
	if line[0] == '!' {
		return fmt.Errorf("%q is not supported", strings.Fields(line)[0])
	}
	line, err := stripComment(line)
	if err != nil {
		return err
	}
	if line == "" {
		return nil
	}
	if line[0] == '[' {
		if line[len(line)-1] != ']' {
			return fmt.Errorf("malformed section header %q", line)
		}
		name := strings.ToLower(strings.TrimSpace(line[1 : len(line)-1]))
		if name == "" {
			return errors.New("empty section name")
		}
		*section = name
		return nil
	}
	if !readSections[*section] {
		return nil // an option for another program, e.g. [client]
	}
	key, value, hasValue := strings.Cut(line, "=")
	key = strings.TrimSpace(key)
	loose := false
	if k := NormalizeKey(key); strings.HasPrefix(k, "loose-") {
		loose = true
		key = k[len("loose-"):]
	}
	if !known(key) {
		if loose {
			return nil
		}
		return fmt.Errorf("unknown option %q", key)
	}
	if !hasValue {
		return fmt.Errorf("option %q needs a value (%s = ...)", key, NormalizeKey(key))
	}
	value, err = unquote(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("option %q: %v", key, err)
	}
	return c.Set(key, value) // its errors name the option
}

func known(key string) bool {
	k := NormalizeKey(key)
	for _, name := range Keys {
		if k == name {
			return true
		}
	}
	return false
}

// stripComment removes a '#' comment that is not inside quotes, and trailing
// space. It reports an unterminated quote.
func stripComment(line string) (string, error) {
	var quote byte
	for i := 0; i < len(line); i++ {
		b := line[i]
		switch {
		case quote != 0:
			if b == quote {
				quote = 0
			}
		case b == '\'' || b == '"':
			quote = b
		case b == '#':
			return strings.TrimSpace(line[:i]), nil
		}
	}
	if quote != 0 {
		return "", fmt.Errorf("unterminated %c quote", quote)
	}
	return line, nil
}

// unquote removes one pair of matching quotes around v, if present.
func unquote(v string) (string, error) {
	if v == "" || (v[0] != '\'' && v[0] != '"') {
		return v, nil
	}
	q := v[0]
	end := strings.IndexByte(v[1:], q)
	if end < 0 {
		return "", fmt.Errorf("unterminated %c quote", q)
	}
	if rest := strings.TrimSpace(v[end+2:]); rest != "" {
		return "", fmt.Errorf("unexpected text %q after quoted value", rest)
	}
	return v[1 : end+1], nil
}
