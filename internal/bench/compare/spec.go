package compare

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is how a target's server comes to be.
type Kind int

const (
	// DSN is a server that is already running, reached at Spec.DSN.
	DSN Kind = iota
	// Lockstep is a lockstep binary started by compare on a free port with
	// a fresh temporary data directory, and stopped after.
	Lockstep
	// MariaDB is MariaDB (Debian's mariadb-server) started by compare with a
	// temporary data directory and lockstep's durability, stopped after.
	MariaDB
)

func (k Kind) String() string {
	switch k {
	case DSN:
		return "dsn"
	case Lockstep:
		return "lockstep"
	case MariaDB:
		return "mariadb"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Spec is one --target: NAME=dsn:DSN, NAME=lockstep:BINARY[:FLAGS] or
// NAME=mariadb[:SETTINGS].
type Spec struct {
	Name   string
	Kind   Kind
	DSN    string   // DSN targets
	Binary string   // Lockstep targets
	Args   []string // Lockstep: extra serve flags; MariaDB: extra [mysqld] lines
	// Globals are a Lockstep target's @VAR=VALUE items: SET GLOBAL VAR =
	// VALUE once the server answers, before the tables are prepared.
	Globals []string
}

// String is the spec as it would be given on the command line.
func (s Spec) String() string {
	switch s.Kind {
	case DSN:
		return s.Name + "=dsn:" + s.DSN
	case Lockstep:
		items := slices.Clone(s.Args)
		for _, g := range s.Globals {
			items = append(items, "@"+g)
		}
		if len(items) == 0 {
			return s.Name + "=lockstep:" + s.Binary
		}
		return s.Name + "=lockstep:" + s.Binary + ":" + strings.Join(items, " ")
	case MariaDB:
		if len(s.Args) == 0 {
			return s.Name + "=mariadb"
		}
		return s.Name + "=mariadb:" + strings.Join(s.Args, " ")
	}
	return s.Name
}

func validName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// ParseSpec parses one --target value:
//
//	NAME=dsn:USER[:PASSWORD]@tcp(HOST:PORT)/[DB]   a running server
//	NAME=lockstep:BINARY[:FLAGS]                   FLAGS: serve flags, space-separated; @VAR=VALUE: SET GLOBAL after start
//	NAME=mariadb[:SETTINGS]                        SETTINGS: extra my.cnf lines, space-separated (key=value)
//
// NAME is letters, digits, '-', '_' and '.' (it names files).
func ParseSpec(v string) (Spec, error) {
	name, rest, ok := strings.Cut(v, "=")
	if !ok {
		return Spec{}, fmt.Errorf("target %q: want NAME=dsn:DSN, NAME=lockstep:BINARY[:FLAGS] or NAME=mariadb", v)
	}
	if !validName(name) {
		return Spec{}, fmt.Errorf("target %q: name %q must be 1-64 letters, digits, '-', '_' or '.'", v, name)
	}
	kind, arg, hasArg := strings.Cut(rest, ":")
	s := Spec{Name: name}
	switch kind {
	case "dsn":
		s.Kind = DSN
		s.DSN = arg
		if !hasArg || arg == "" {
			return Spec{}, fmt.Errorf("target %q: dsn: needs a DSN (USER@tcp(HOST:PORT)/)", v)
		}
	case "lockstep":
		s.Kind = Lockstep
		bin, flags, _ := strings.Cut(arg, ":")
		if bin == "" {
			return Spec{}, fmt.Errorf("target %q: lockstep: needs the path of a lockstep binary", v)
		}
		s.Binary = bin
		for _, a := range strings.Fields(flags) {
			if g, ok := strings.CutPrefix(a, "@"); ok {
				if !validGlobal(g) {
					return Spec{}, fmt.Errorf("target %q: %s: want @VARIABLE=VALUE (SET GLOBAL after start; VALUE without quotes or ';')", v, a)
				}
				s.Globals = append(s.Globals, g)
				continue
			}
			if f := flagName(a); f == "datadir" || f == "port" || f == "bind-address" {
				return Spec{}, fmt.Errorf("target %q: --%s is chosen by bench compare", v, f)
			}
			s.Args = append(s.Args, a)
		}
	case "mariadb":
		s.Kind = MariaDB
		s.Args = strings.Fields(arg)
		for _, a := range s.Args {
			k, _, _ := strings.Cut(a, "=")
			switch strings.ReplaceAll(k, "-", "_") {
			case "datadir", "port", "socket", "pid_file", "bind_address":
				return Spec{}, fmt.Errorf("target %q: %s is chosen by bench compare", v, k)
			}
		}
	default:
		return Spec{}, fmt.Errorf("target %q: unknown kind %q (dsn, lockstep, mariadb)", v, kind)
	}
	if len(s.Args) == 0 {
		s.Args = nil
	}
	return s, nil
}

// validGlobal checks an @VAR=VALUE item: VAR a system variable's name,
// VALUE a number or a word (ON, OFF, 200, 1.5) that is sent as it is.
func validGlobal(g string) bool {
	name, val, ok := strings.Cut(g, "=")
	if !ok || name == "" || val == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	for _, c := range val {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func flagName(a string) string {
	if !strings.HasPrefix(a, "-") {
		return ""
	}
	n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return n
}

// ParseSpecs parses every --target; two or more with distinct names.
func ParseSpecs(vs []string) ([]Spec, error) {
	if len(vs) < 2 {
		return nil, fmt.Errorf("--target: need two or more targets, got %d", len(vs))
	}
	seen := map[string]bool{}
	out := make([]Spec, 0, len(vs))
	for _, v := range vs {
		s, err := ParseSpec(v)
		if err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("--target: name %q given twice", s.Name)
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	return out, nil
}
