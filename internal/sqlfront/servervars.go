package sqlfront

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
)

// System variables whose value belongs to one server.
//
// go-mysql-server keeps one registry of system variables for the whole
// process (sql.SystemVariables): every definition and every global value.
// Two lockstep servers in one process (the cluster tests) must not share
// the values lockstep owns, so the registry holds only their definitions
// (registered once per process, with their defaults as values) and each
// Frontend keeps their global values:
//
//   - dynamic variables (innodb_lock_wait_timeout, autocommit, ...): SET
//     GLOBAL reaches serverVar.SetValue with the statement's context, which
//     names the session and so the server; the value is stored there and
//     the registry keeps the default;
//   - server variables (server_uuid, gtid_executed, port, ...): read-only,
//     answered by a function the server installs (SetServerVariable).
//
// Reads find the server through the session: @@x of a global-only
// variable through the variable's session scope (ownScope), @@global.x
// through a rewrite of the plan (globalVarsRule), SHOW [GLOBAL] VARIABLES
// and SHOW [GLOBAL] STATUS through the exec builder (execOverride), new
// sessions through initSessionVars. docs/isolation.md lists what stays
// shared because go-mysql-server reads it from its registry.

// serverVar is the definition of a variable whose global value is per
// server.
type serverVar struct {
	*sql.MysqlSystemVariable
	key        string // lower-case name
	fromServer bool   // read-only; the value comes from SetServerVariable
}

// perServer marks a definition as having per-server global values.
func perServer(v *sql.MysqlSystemVariable) *serverVar {
	return &serverVar{MysqlSystemVariable: v, key: strings.ToLower(v.Name)}
}

// fromServer defines a read-only global variable answered by the server.
func fromServer(v *sql.MysqlSystemVariable) *serverVar {
	v.Scope = sql.GetMysqlScope(sql.SystemVariableScope_Global)
	v.Dynamic = false
	return &serverVar{MysqlSystemVariable: v, key: strings.ToLower(v.Name), fromServer: true}
}

func (v *serverVar) IsReadOnly() bool { return v.fromServer || v.MysqlSystemVariable.IsReadOnly() }

// GetSessionScope is the scope of @@name and @@session.name: for a
// global-only variable, the server's global value.
func (v *serverVar) GetSessionScope() sql.SystemVariableScope {
	if v.Scope.Type == sql.SystemVariableScope_Global {
		return ownScope{}
	}
	return v.MysqlSystemVariable.GetSessionScope()
}

// SetValue implements sql.SystemVariable. A global value is validated and
// converted as go-mysql-server does, then stored in the server of ctx's
// session; the process-wide registry keeps the default.
func (v *serverVar) SetValue(ctx *sql.Context, val any, global bool) (sql.SystemVarValue, error) {
	if v.fromServer {
		return sql.SystemVarValue{}, sql.ErrSystemVariableReadOnly.New(v.Name)
	}
	if !global {
		return v.MysqlSystemVariable.SetValue(ctx, val, false)
	}
	fe := frontendOf(ctx)
	if fe == nil {
		return sql.SystemVarValue{}, fmt.Errorf("lockstep: SET GLOBAL %s outside a lockstep session", v.Name)
	}
	svv, err := v.MysqlSystemVariable.SetValue(ctx, val, true)
	if err != nil {
		return sql.SystemVarValue{}, err
	}
	fe.vars.setGlobal(v.key, svv.Val)
	fe.vars.notify(v.key, svv.Val)
	return sql.SystemVarValue{Var: v, Val: v.Default}, nil
}

// ownScope is the scope of @@name (global=false: the scope a session uses
// for a global-only variable) or @@global.name (after globalVarsRule) for
// a per-server variable.
type ownScope struct{ global bool }

var _ sql.SystemVariableScope = ownScope{}

func (s ownScope) GetValue(ctx *sql.Context, name string, _ sql.CollationID) (any, error) {
	if fe := frontendOf(ctx); fe != nil {
		if v, ok := fe.GlobalVariable(name); ok {
			return v, nil
		}
	}
	_, v, ok := sql.SystemVariables.GetGlobal(name)
	if !ok {
		return nil, sql.ErrUnknownSystemVariable.New(name)
	}
	return v, nil
}

func (s ownScope) SetValue(ctx *sql.Context, name string, val any) error {
	if s.global {
		return sql.SystemVariables.SetGlobal(ctx, name, val)
	}
	return ctx.SetSessionVariable(ctx, name, val) // fails as for any global-only variable
}

func (s ownScope) IsGlobalOnly() bool  { return s.global }
func (s ownScope) IsSessionOnly() bool { return !s.global }

// frontendOf is the server of ctx's session, nil outside a lockstep session.
func frontendOf(ctx *sql.Context) *Frontend {
	if ctx == nil {
		return nil
	}
	if s, ok := ctx.Session.(*Session); ok {
		return s.fe
	}
	return nil
}

// serverVars holds one server's values of the per-server variables.
type serverVars struct {
	mu       sync.RWMutex
	globals  map[string]any        // SET GLOBAL values, by lower-case name
	sources  map[string]func() any // server variables, by lower-case name
	watchers map[string][]func(any)
}

// notify calls the watchers of name with its new global value.
func (sv *serverVars) notify(name string, v any) {
	sv.mu.RLock()
	ws := sv.watchers[name]
	sv.mu.RUnlock()
	for _, w := range ws {
		w(v)
	}
}

// WatchGlobal calls f with every new global value of the per-server
// dynamic variable name, set by SET GLOBAL or SetGlobalVariable; the
// server uses it to apply a setting to the part that owns it (the commit
// pipeline's sync delay). f runs on the setting session's goroutine.
func (fe *Frontend) WatchGlobal(name string, f func(any)) error {
	def := ownedVar(name)
	if def == nil || def.fromServer {
		return fmt.Errorf("lockstep: %s is not a per-server dynamic variable", name)
	}
	fe.vars.mu.Lock()
	if fe.vars.watchers == nil {
		fe.vars.watchers = map[string][]func(any){}
	}
	fe.vars.watchers[def.key] = append(fe.vars.watchers[def.key], f)
	fe.vars.mu.Unlock()
	return nil
}

// SetGlobalVariable sets this server's global value of a per-server
// dynamic variable, converted and checked as SET GLOBAL does (a server
// option's start-up value), and tells its watchers.
func (fe *Frontend) SetGlobalVariable(name string, val any) error {
	def := ownedVar(name)
	if def == nil || def.fromServer {
		return fmt.Errorf("lockstep: %s is not a per-server dynamic variable", name)
	}
	conv, _, err := def.Type.Convert(context.Background(), val)
	if err != nil {
		return fmt.Errorf("lockstep: @@%s = %v: %w", def.Name, val, err)
	}
	fe.vars.setGlobal(def.key, conv)
	fe.vars.notify(def.key, conv)
	return nil
}

func (sv *serverVars) setGlobal(name string, v any) {
	sv.mu.Lock()
	if sv.globals == nil {
		sv.globals = map[string]any{}
	}
	sv.globals[name] = v
	sv.mu.Unlock()
}

// ownedVar returns the per-server definition named name (any case).
func ownedVar(name string) *serverVar {
	registerSystemVariables()
	if v, ok := ownedVars[name]; ok {
		return v
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			return ownedVars[strings.ToLower(name)]
		}
	}
	return nil
}

// GlobalVariable returns this server's global value of a per-server
// variable; ok is false for any other variable.
func (fe *Frontend) GlobalVariable(name string) (any, bool) {
	def := ownedVar(name)
	if def == nil {
		return nil, false
	}
	fe.vars.mu.RLock()
	src := fe.vars.sources[def.key]
	val, set := fe.vars.globals[def.key]
	fe.vars.mu.RUnlock()
	switch {
	case def.fromServer && src != nil:
		return src(), true
	case set:
		return val, true
	}
	return def.Default, true
}

// SetServerVariable installs f as the source of the read-only server
// variable name (server_uuid, gtid_executed, port, ...). f is called on
// every read and must be safe for concurrent use.
func (fe *Frontend) SetServerVariable(name string, f func() any) error {
	def := ownedVar(name)
	if def == nil || !def.fromServer {
		return fmt.Errorf("lockstep: %s is not a server variable", name)
	}
	fe.vars.mu.Lock()
	if fe.vars.sources == nil {
		fe.vars.sources = map[string]func() any{}
	}
	fe.vars.sources[def.key] = f
	fe.vars.mu.Unlock()
	return nil
}

// GlobalAutocommit is this server's @@global.autocommit: what a new
// session starts with.
func (fe *Frontend) GlobalAutocommit() bool {
	v, ok := fe.GlobalVariable("autocommit")
	if !ok {
		return true
	}
	on, err := sql.ConvertToBool(nil, v)
	return err != nil || on
}

// initSessionVars gives a new session this server's global values of the
// per-server variables that also have a session value (the registry gave
// it the defaults).
func (fe *Frontend) initSessionVars(s *Session) error {
	fe.vars.mu.RLock()
	if len(fe.vars.globals) == 0 {
		fe.vars.mu.RUnlock()
		return nil
	}
	type kv struct {
		k string
		v any
	}
	var set []kv
	for k, v := range fe.vars.globals {
		if def := ownedVars[k]; def != nil && def.Scope.Type == sql.SystemVariableScope_Both {
			set = append(set, kv{k, v})
		}
	}
	fe.vars.mu.RUnlock()
	ctx := sql.NewContext(context.Background(), sql.WithSession(s))
	for _, e := range set {
		if err := s.BaseSession.SetSessionVariable(ctx, e.k, e.v); err != nil {
			return fmt.Errorf("session value of %s: %w", e.k, err)
		}
	}
	return nil
}

// ownGlobals returns this server's values of the global-only per-server
// variables, by lower-case name.
func (fe *Frontend) ownGlobals(globalOnly bool) map[string]any {
	m := make(map[string]any, len(ownedVars))
	for k, def := range ownedVars {
		if globalOnly && def.Scope.Type != sql.SystemVariableScope_Global {
			continue
		}
		m[k], _ = fe.GlobalVariable(k)
	}
	return m
}
