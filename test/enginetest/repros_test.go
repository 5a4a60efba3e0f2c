package enginetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/sqlfront"
)

// Minimal reproductions of the lockstep bugs behind the skip list
// (skiplist_test.go), written against MySQL's behaviour. They fail until the
// bug is fixed, so they only run with LOCKSTEP_ENGINETEST_REPRO=1:
//
//	LOCKSTEP_ENGINETEST_REPRO=1 go test ./test/enginetest/ -run TestRepro -v
//
// Each case runs its statements in order in one session of a fresh
// Frontend and checks the last one. READONLY-regression passes since
// Table.IsTemporary exists (GMS panicked on DML in a READ ONLY transaction
// without it); it stays as a regression check. So do the cases of the bugs
// fixed on 2026-11-22 (MULTIRANGE, NULLLOOKUP, IGNORE, OWNWRITES, UNIQUEADD,
// ALTERCONV/out-of-range, ALTERCONV/enum-reorder, AUTOINC/modify-adds,
// PKMODIFY/*, DECIMAL, SUBPART, SAVEPOINT, EVENTS) and on 2026-11-23
// (DEFAULTFIRST, DEFAULTFIRST/generated): they pass now and guard
// against the bugs coming back.

type repro struct {
	name    string // the skip-list group it explains
	stmts   []string
	want    string // fmt.Sprint of the last statement's rows
	wantErr string // substring of the last statement's error
}

var repros = []repro{
	{name: "MULTIRANGE", stmts: []string{
		"create table t (pk int primary key, v1 int, v2 int, key k (v1, v2))",
		"insert into t values (1,0,0), (2,1,5), (3,2,1), (4,5,9)",
		"select pk from t where (v1 < 3 and v2 < 2) or (v2 > 3) order by pk",
	}, want: "[[1] [2] [3] [4]]"},
	{name: "NULLLOOKUP", stmts: []string{
		"create table xy (x int, y int, z int primary key, index y_idx (y))",
		"create table ab (a int, b int primary key, c int)",
		"insert into xy values (1,0,0), (1,null,1), (0,2,2), (0,2,3)",
		"insert into ab values (0,1,0), (1,2,1), (2,3,2), (null,4,3)",
		"select /*+ JOIN_ORDER(ab,xy) LOOKUP_JOIN(ab,xy) */ y, a, z from xy join ab on y = a order by z",
	}, want: "[[0 0 0] [2 2 2] [2 2 3]]"},
	{name: "IGNORE", stmts: []string{
		"create table w (pk int primary key)",
		"insert into w values (1)",
		"insert ignore into w values (2), (1), (3)",
		"select pk from w order by pk",
	}, want: "[[1] [2] [3]]"},
	{name: "OWNWRITES", stmts: []string{
		"create table a (pk int primary key, c1 int)",
		"create table b (pk1 int, pk2 int, primary key (pk1, pk2))",
		"insert into a values (0,0), (1,1)",
		"insert into b values (0,0), (0,1), (1,0), (1,1)",
		"update a inner join b on a.pk = b.pk1 set a.c1 = a.c1 + 1",
		"select * from a order by pk",
	}, want: "[[0 1] [1 2]]"},
	{name: "UNIQUEADD", stmts: []string{
		"create table kl (a int, val int)",
		"insert into kl values (1,1), (2,1)",
		"alter table kl add constraint c unique (val)",
	}, wantErr: "Duplicate entry"},
	{name: "ALTERCONV/out-of-range", stmts: []string{
		"create table xx (pk int primary key, i2 int)",
		"insert into xx values (1,-1)",
		"alter table xx modify column i2 int unsigned",
	}, wantErr: "out of range"},
	{name: "ALTERCONV/enum-reorder", stmts: []string{
		"create table e (i int primary key, e enum('a','b','c'))",
		"insert into e values (1,'a'), (2,'b'), (3,'c')",
		"alter table e modify column e enum('c','a','b')",
		"select i, cast(e as char) from e order by i",
	}, want: "[[1 a] [2 b] [3 c]]"},
	{name: "ALTERCONV/enum-invalid", stmts: []string{
		"create table en (i int primary key, e enum('a','b'))",
		"insert into en values (1,'a'), (2,'b')",
		"alter table en modify column e enum('a')",
	}, wantErr: "Data truncated"},
	{name: "AUTOINC/float", stmts: []string{
		"create table af (pk float primary key auto_increment)",
		"insert into af values (1), (10), (null)",
		"select pk from af order by pk",
	}, want: "[[1] [10] [11]]"},
	{name: "AUTOINC/modify-adds", stmts: []string{
		"create table ai (i bigint primary key, s varchar(20))",
		"insert into ai values (1,'a'), (2,'b')",
		"alter table ai modify column i bigint auto_increment",
		"insert into ai (s) values ('new row')",
		"select i from ai order by i",
	}, want: "[[1] [2] [3]]"},
	{name: "PKMODIFY/describe", stmts: []string{
		"create table pm (pk int primary key, val int)",
		"alter table pm modify pk int",
		"describe pm",
	}, want: "[[pk int NO PRI <nil> ] [val int YES  <nil> ]]"},
	{name: "PKMODIFY/null-pk", stmts: []string{
		"create table r (x int primary key auto_increment, y int)",
		"alter table r modify column x int",
		"insert into r values (NULL, 3)",
	}, wantErr: "non-nullable"}, // GMS's text for ER_BAD_NULL_ERROR (MySQL: "Column 'x' cannot be null")
	{name: "JSONTYPES", stmts: []string{
		"create table j (x int primary key, y json)",
		"insert into j values (1, cast(cast(1 as unsigned) as json))",
		"select json_type(y) from j",
	}, want: "[[UNSIGNED INTEGER]]"},
	{name: "DECIMAL", stmts: []string{
		"create table dd (pk int primary key, val decimal(20,16))",
		"insert into dd values (1, 2.5633000000000370)",
		"select cast(val as char) from dd",
	}, want: "[[2.5633000000000370]]"},
	{name: "DEFAULTFIRST", stmts: []string{
		"create table t17 (pk int primary key, v1 int)",
		"insert into t17 values (1,3), (2,4)",
		"alter table t17 add column v2 int default (v1 + 2) first",
		"select * from t17 order by pk",
	}, want: "[[5 1 3] [6 2 4]]"},
	{name: "DEFAULTFIRST/generated", stmts: []string{
		"create table g (a int primary key, b int)",
		"insert into g values (1,2), (2,3)",
		"alter table g add column c int generated always as (a + b) stored",
		"select * from g order by a",
	}, want: "[[1 2 3] [2 3 5]]"},
	{name: "SUBPART", stmts: []string{
		"create table sp (i int primary key, b varchar(10), key (b(4)))",
		"select index_name, column_name, sub_part from information_schema.statistics where table_name = 'sp' order by 1",
	}, want: "[[b b 4] [PRIMARY i <nil>]]"},
	{name: "SAVEPOINT", stmts: []string{
		"rollback to nosuch",
	}, wantErr: "kind:ErrSavepointDoesNotExist"},
	{name: "EVENTS", stmts: []string{
		"select count(*) from information_schema.events",
	}, want: "[[0]]"},
	{name: "EVENTRENAME", stmts: []string{
		"create table totals (num int)",
		"create event e1 on schedule every 1 hour disable do insert into totals values (1)",
		"create event e2 on schedule every 1 hour disable do insert into totals values (2)",
		"alter event e2 rename to e1",
	}, wantErr: "already exists"},
	{name: "TEMP", stmts: []string{
		"create temporary table tmp (pk int primary key)",
		"insert into tmp values (1)",
		"select * from tmp",
	}, want: "[[1]]"},
	{name: "READONLY-regression", stmts: []string{
		"create table ro (pk int primary key)",
		"insert into ro values (0)",
		"commit",
		"set autocommit = off",
		"start transaction read only",
		"delete from ro where pk = 0",
	}, wantErr: "READ ONLY transaction"},
}

func TestRepro(t *testing.T) {
	if os.Getenv("LOCKSTEP_ENGINETEST_REPRO") != "1" {
		t.Skip("bug reproductions; run with LOCKSTEP_ENGINETEST_REPRO=1")
	}
	for _, r := range repros {
		t.Run(r.name, func(t *testing.T) {
			fe := mustFrontend()
			defer fe.Close()
			ctx := sql.NewContext(context.Background(), sql.WithSession(newSession(fe)))
			for _, q := range []string{"create database d", "use d"} {
				if _, err := runQuery(fe, ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			var rows []sql.Row
			var err error
			for i, q := range r.stmts {
				rows, err = runQuery(fe, ctx, q)
				if err != nil && i < len(r.stmts)-1 {
					t.Fatalf("%s: %v", q, err)
				}
			}
			last := r.stmts[len(r.stmts)-1]
			switch {
			case r.wantErr == "kind:ErrSavepointDoesNotExist":
				if err == nil || !sql.ErrSavepointDoesNotExist.Is(err) {
					t.Errorf("%s: want sql.ErrSavepointDoesNotExist, got %T %v", last, err, err)
				}
			case r.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), r.wantErr) {
					t.Errorf("%s: want error containing %q, got %v (rows %v)", last, r.wantErr, err, rows)
				}
			case err != nil:
				t.Errorf("%s: %v", last, err)
			default:
				if got := fmt.Sprint(rows); got != r.want {
					t.Errorf("%s:\n got  %s\n want %s", last, got, r.want)
				}
			}
		})
	}
}

// runQuery runs q to completion, turning a panic into an error.
func runQuery(fe *sqlfront.Frontend, ctx *sql.Context, q string) (rows []sql.Row, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	ctx = ctx.WithQuery(q)
	_, iter, _, err := fe.Engine.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(ctx, iter)
}
