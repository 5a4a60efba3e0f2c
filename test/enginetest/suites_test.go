package enginetest

import (
	"fmt"
	"os"
	"testing"

	gmstest "github.com/dolthub/go-mysql-server/enginetest"
	"github.com/dolthub/go-mysql-server/enginetest/queries"
)

// Suites run in one of four tiers:
//
//	core    always (the default `go test ./test/enginetest/`)
//	full    with LOCKSTEP_ENGINETEST=full or =all (slower suites, mostly
//	        prepared-statement re-runs of core suites)
//	broken  only with LOCKSTEP_ENGINETEST=all: the suite has failures that
//	        cannot be skipped one at a time (the library neither asks
//	        SkipQueryTest nor goes through an evaluation hook), so it is
//	        expected to FAIL; the reason is the skip message
//	off     never: the suite targets a feature lockstep does not claim; the
//	        reason is the skip message
type tier int

const (
	core tier = iota
	full
	broken
	off
)

var mode = os.Getenv("LOCKSTEP_ENGINETEST")

// start returns a harness for the running suite, or skips the suite.
func start(t *testing.T, tr tier, reason string) *harness {
	t.Helper()
	switch tr {
	case full:
		if mode != "full" && mode != "all" {
			t.Skip("long suite: runs with LOCKSTEP_ENGINETEST=full")
		}
	case broken:
		if mode != "all" {
			t.Skip("has failures that cannot be skipped one by one (runs with LOCKSTEP_ENGINETEST=all): " + reason)
		}
	case off:
		t.Skip("not run: " + reason)
	}
	return newHarness()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := skips.writeRecord(); err != nil {
		fmt.Fprintln(os.Stderr, "enginetest: writing record:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// --- queries ---------------------------------------------------------------

func TestQueries(t *testing.T)         { gmstest.TestQueries(t, start(t, core, "")) }
func TestQueriesPrepared(t *testing.T) { gmstest.TestQueriesPrepared(t, start(t, full, "")) }
func TestJoinQueries(t *testing.T)     { gmstest.TestJoinQueries(t, start(t, core, "")) }
func TestJoinQueriesPrepared(t *testing.T) {
	gmstest.TestJoinQueriesPrepared(t, start(t, full, ""))
}
func TestJoinOps(t *testing.T) {
	gmstest.TestJoinOps(t, start(t, core, ""), gmstest.DefaultJoinOpTests)
}
func TestLateralJoinQueries(t *testing.T) { gmstest.TestLateralJoinQueries(t, start(t, core, "")) }
func TestOrderByGroupBy(t *testing.T)     { gmstest.TestOrderByGroupBy(t, start(t, core, "")) }
func TestColumnAliases(t *testing.T)      { gmstest.TestColumnAliases(t, start(t, core, "")) }
func TestDerivedTableOuterScopeVisibility(t *testing.T) {
	gmstest.TestDerivedTableOuterScopeVisibility(t, start(t, core, ""))
}
func TestAmbiguousColumnResolution(t *testing.T) {
	gmstest.TestAmbiguousColumnResolution(t, start(t, core, ""))
}
func TestQueryErrors(t *testing.T)         { gmstest.TestQueryErrors(t, start(t, core, "")) }
func TestNaturalJoin(t *testing.T)         { gmstest.TestNaturalJoin(t, start(t, core, "")) }
func TestNaturalJoinEqual(t *testing.T)    { gmstest.TestNaturalJoinEqual(t, start(t, core, "")) }
func TestNaturalJoinDisjoint(t *testing.T) { gmstest.TestNaturalJoinDisjoint(t, start(t, core, "")) }
func TestInnerNestedInNaturalJoins(t *testing.T) {
	gmstest.TestInnerNestedInNaturalJoins(t, start(t, core, ""))
}
func TestWindowFunctions(t *testing.T)   { gmstest.TestWindowFunctions(t, start(t, core, "")) }
func TestWindowRowFrames(t *testing.T)   { gmstest.TestWindowRowFrames(t, start(t, core, "")) }
func TestWindowRangeFrames(t *testing.T) { gmstest.TestWindowRangeFrames(t, start(t, core, "")) }
func TestNamedWindows(t *testing.T)      { gmstest.TestNamedWindows(t, start(t, core, "")) }
func TestInfoSchema(t *testing.T)        { gmstest.TestInfoSchema(t, start(t, core, "")) }
func TestInfoSchemaPrepared(t *testing.T) {
	gmstest.TestInfoSchemaPrepared(t, start(t, full, ""))
}
func TestConvert(t *testing.T)           { gmstest.TestConvert(t, start(t, core, "")) }
func TestConvertPrepared(t *testing.T)   { gmstest.TestConvertPrepared(t, start(t, full, "")) }
func TestRowLimit(t *testing.T)          { gmstest.TestRowLimit(t, start(t, core, "")) }
func TestJSONTableQueries(t *testing.T)  { gmstest.TestJSONTableQueries(t, start(t, core, "")) }
func TestJSONTableScripts(t *testing.T)  { gmstest.TestJSONTableScripts(t, start(t, core, "")) }
func TestJsonScripts(t *testing.T)       { gmstest.TestJsonScripts(t, start(t, core, ""), nil) }
func TestVectorFunctions(t *testing.T)   { gmstest.TestVectorFunctions(t, start(t, core, "")) }
func TestAnsiQuotesSqlMode(t *testing.T) { gmstest.TestAnsiQuotesSqlMode(t, start(t, core, "")) }
func TestSQLLogicTests(t *testing.T)     { gmstest.TestSQLLogicTests(t, start(t, full, "")) }

// --- writes ----------------------------------------------------------------

func TestInsertInto(t *testing.T)       { gmstest.TestInsertInto(t, start(t, core, "")) }
func TestInsertIgnoreInto(t *testing.T) { gmstest.TestInsertIgnoreInto(t, start(t, core, "")) }
func TestInsertDuplicateKeyKeyless(t *testing.T) {
	gmstest.TestInsertDuplicateKeyKeyless(t, start(t, core, ""))
}
func TestIgnoreIntoWithDuplicateUniqueKeyKeyless(t *testing.T) {
	gmstest.TestIgnoreIntoWithDuplicateUniqueKeyKeyless(t, start(t, core, ""))
}
func TestInsertIntoErrors(t *testing.T)  { gmstest.TestInsertIntoErrors(t, start(t, core, "")) }
func TestReplaceInto(t *testing.T)       { gmstest.TestReplaceInto(t, start(t, core, "")) }
func TestReplaceIntoErrors(t *testing.T) { gmstest.TestReplaceIntoErrors(t, start(t, core, "")) }
func TestUpdate(t *testing.T)            { gmstest.TestUpdate(t, start(t, core, "")) }
func TestUpdateIgnore(t *testing.T)      { gmstest.TestUpdateIgnore(t, start(t, core, "")) }
func TestUpdateErrors(t *testing.T)      { gmstest.TestUpdateErrors(t, start(t, core, "")) }
func TestDelete(t *testing.T)            { gmstest.TestDelete(t, start(t, core, "")) }
func TestDeleteErrors(t *testing.T)      { gmstest.TestDeleteErrors(t, start(t, core, "")) }
func TestTruncate(t *testing.T) {
	gmstest.TestTruncate(t, start(t, core, ""))
}
func TestOnUpdateExprScripts(t *testing.T) {
	gmstest.TestOnUpdateExprScripts(t, start(t, core, ""))
}
func TestPreparedInsert(t *testing.T) { gmstest.TestPreparedInsert(t, start(t, core, "")) }
func TestInsertQueriesPrepared(t *testing.T) {
	gmstest.TestInsertQueriesPrepared(t, start(t, full, ""))
}
func TestUpdateQueriesPrepared(t *testing.T) {
	gmstest.TestUpdateQueriesPrepared(t, start(t, full, ""))
}
func TestDeleteQueriesPrepared(t *testing.T) {
	gmstest.TestDeleteQueriesPrepared(t, start(t, full, ""))
}
func TestReplaceQueriesPrepared(t *testing.T) {
	gmstest.TestReplaceQueriesPrepared(t, start(t, full, ""))
}
func TestInsertScriptsPrepared(t *testing.T) {
	gmstest.TestInsertScriptsPrepared(t, start(t, full, ""))
}
func TestInsertIgnoreScriptsPrepared(t *testing.T) {
	gmstest.TestInsertIgnoreScriptsPrepared(t, start(t, full, ""))
}
func TestInsertErrorScriptsPrepared(t *testing.T) {
	gmstest.TestInsertErrorScriptsPrepared(t, start(t, full, ""))
}

// --- scripts, indexes, schema objects ---------------------------------------

func TestScripts(t *testing.T)             { gmstest.TestScripts(t, start(t, core, "")) }
func TestScriptsPrepared(t *testing.T)     { gmstest.TestScriptsPrepared(t, start(t, full, "")) }
func TestNumericErrorScripts(t *testing.T) { gmstest.TestNumericErrorScripts(t, start(t, core, "")) }
func TestComplexIndexQueries(t *testing.T) { gmstest.TestComplexIndexQueries(t, start(t, core, "")) }
func TestComplexIndexQueriesPrepared(t *testing.T) {
	gmstest.TestComplexIndexQueriesPrepared(t, start(t, full, ""))
}
func TestIndexes(t *testing.T)       { gmstest.TestIndexes(t, start(t, core, "")) }
func TestIndexPrefix(t *testing.T)   { gmstest.TestIndexPrefix(t, start(t, core, "")) }
func TestNullRanges(t *testing.T)    { gmstest.TestNullRanges(t, start(t, core, "")) }
func TestBlobs(t *testing.T)         { gmstest.TestBlobs(t, start(t, core, "")) }
func TestViews(t *testing.T)         { gmstest.TestViews(t, start(t, core, "")) }
func TestViewsPrepared(t *testing.T) { gmstest.TestViewsPrepared(t, start(t, full, "")) }
func TestRecursiveViewDefinition(t *testing.T) {
	gmstest.TestRecursiveViewDefinition(t, start(t, core, ""))
}
func TestTriggers(t *testing.T)         { gmstest.TestTriggers(t, start(t, core, "")) }
func TestRollbackTriggers(t *testing.T) { gmstest.TestRollbackTriggers(t, start(t, core, "")) }
func TestShowTriggers(t *testing.T)     { gmstest.TestShowTriggers(t, start(t, core, "")) }
func TestTriggerErrors(t *testing.T)    { gmstest.TestTriggerErrors(t, start(t, core, "")) }
func TestStoredProcedures(t *testing.T) { gmstest.TestStoredProcedures(t, start(t, core, "")) }

// --- session, variables, metadata -------------------------------------------

func TestVariables(t *testing.T)      { gmstest.TestVariables(t, start(t, core, "")) }
func TestVariableErrors(t *testing.T) { gmstest.TestVariableErrors(t, start(t, core, "")) }
func TestWarnings(t *testing.T)       { gmstest.TestWarnings(t, start(t, core, "")) }
func TestClearWarnings(t *testing.T)  { gmstest.TestClearWarnings(t, start(t, core, "")) }
func TestUse(t *testing.T)            { gmstest.TestUse(t, start(t, core, "")) }
func TestNoDatabaseSelected(t *testing.T) {
	gmstest.TestNoDatabaseSelected(t, start(t, core, ""))
}
func TestSessionSelectLimit(t *testing.T) { gmstest.TestSessionSelectLimit(t, start(t, core, "")) }
func TestCurrentTimestamp(t *testing.T)   { gmstest.TestCurrentTimestamp(t, start(t, core, "")) }
func TestShowTableStatus(t *testing.T)    { gmstest.TestShowTableStatus(t, start(t, core, "")) }
func TestShowTableStatusPrepared(t *testing.T) {
	gmstest.TestShowTableStatusPrepared(t, start(t, full, ""))
}
func TestDateParse(t *testing.T)          { gmstest.TestDateParse(t, start(t, core, "")) }
func TestPrepared(t *testing.T)           { gmstest.TestPrepared(t, start(t, core, "")) }
func TestPreparedStatements(t *testing.T) { gmstest.TestPreparedStatements(t, start(t, core, "")) }
func TestCharsetCollationEngine(t *testing.T) {
	h := start(t, core, "")
	// The suite asks the harness about setup statements only; a script
	// with none (Issue #5482) is left out here when the skip list names it.
	all := queries.CharsetCollationEngineTests
	defer func() { queries.CharsetCollationEngineTests = all }()
	var kept []queries.CharsetCollationEngineTest
	for _, s := range all {
		if !h.SkipQueryTest(s.Name) {
			kept = append(kept, s)
		}
	}
	queries.CharsetCollationEngineTests = kept
	gmstest.TestCharsetCollationEngine(t, h)
}
func TestMySqlDb(t *testing.T)        { gmstest.TestMySqlDb(t, start(t, core, "")) }
func TestUserPrivileges(t *testing.T) { gmstest.TestUserPrivileges(t, start(t, full, "")) }
func TestUserAuthentication(t *testing.T) {
	gmstest.TestUserAuthentication(t, start(t, off, "its server setup reads ./testdata/selfsigned_cert.pem relative to GMS's own enginetest directory"))
}
func TestTypesOverWire(t *testing.T) {
	h := start(t, full, "")
	gmstest.TestTypesOverWire(t, h, h.SessionBuilder())
}

// --- DDL -------------------------------------------------------------------

func TestCreateTable(t *testing.T)  { gmstest.TestCreateTable(t, start(t, core, "")) }
func TestDropTable(t *testing.T)    { gmstest.TestDropTable(t, start(t, core, "")) }
func TestRenameTable(t *testing.T)  { gmstest.TestRenameTable(t, start(t, core, "")) }
func TestRenameColumn(t *testing.T) { gmstest.TestRenameColumn(t, start(t, core, "")) }
func TestAddColumn(t *testing.T)    { gmstest.TestAddColumn(t, start(t, core, "")) }
func TestModifyColumn(t *testing.T) { gmstest.TestModifyColumn(t, start(t, core, "")) }
func TestDropColumn(t *testing.T)   { gmstest.TestDropColumn(t, start(t, core, "")) }
func TestDropColumnKeylessTables(t *testing.T) {
	gmstest.TestDropColumnKeylessTables(t, start(t, core, ""))
}
func TestAlterTable(t *testing.T)       { gmstest.TestAlterTable(t, start(t, core, "")) }
func TestAddDropPks(t *testing.T)       { gmstest.TestAddDropPks(t, start(t, core, "")) }
func TestPkOrdinalsDDL(t *testing.T)    { gmstest.TestPkOrdinalsDDL(t, start(t, core, "")) }
func TestPkOrdinalsDML(t *testing.T)    { gmstest.TestPkOrdinalsDML(t, start(t, core, "")) }
func TestColumnDefaults(t *testing.T)   { gmstest.TestColumnDefaults(t, start(t, core, "")) }
func TestCreateDatabase(t *testing.T)   { gmstest.TestCreateDatabase(t, start(t, core, "")) }
func TestDropDatabase(t *testing.T)     { gmstest.TestDropDatabase(t, start(t, core, "")) }
func TestGeneratedColumns(t *testing.T) { gmstest.TestGeneratedColumns(t, start(t, core, "")) }

// --- transactions ----------------------------------------------------------

// TestTransactionScripts runs queries.TransactionTests one script at a time
// (as enginetest.TestTransactionScripts does) so that a whole script can be
// skipped by name: the library only consults SkipQueryTest for a
// transaction script's statements.
func TestTransactionScripts(t *testing.T) {
	h := start(t, core, "")
	for _, script := range queries.TransactionTests {
		if h.SkipQueryTest(script.Name) {
			t.Run(script.Name, func(t *testing.T) { t.Skip(skips.reasons[script.Name]) })
			continue
		}
		gmstest.TestTransactionScript(t, h, script)
	}
}

func TestConcurrentTransactions(t *testing.T) {
	gmstest.TestConcurrentTransactions(t, start(t, core, ""))
}

// CHECK constraints (run since 2026-11-23, checks.go).

const (
	noSpatial = "spatial types are not implemented (GEOMETRY columns are not storable)"
)

func TestCreateCheckConstraints(t *testing.T) {
	gmstest.TestCreateCheckConstraints(t, start(t, core, ""))
}
func TestChecksOnInsert(t *testing.T) { gmstest.TestChecksOnInsert(t, start(t, core, "")) }
func TestChecksOnUpdate(t *testing.T) { gmstest.TestChecksOnUpdate(t, start(t, core, "")) }
func TestDisallowedCheckConstraints(t *testing.T) {
	gmstest.TestDisallowedCheckConstraints(t, start(t, core, ""))
}
func TestDropCheckConstraints(t *testing.T) {
	gmstest.TestDropCheckConstraints(t, start(t, core, ""))
}

// --- not run ---------------------------------------------------------------

func TestSpatialQueries(t *testing.T) { gmstest.TestSpatialQueries(t, start(t, off, noSpatial)) }
func TestSpatialScripts(t *testing.T) { gmstest.TestSpatialScripts(t, start(t, off, noSpatial)) }
func TestSpatialIndexScripts(t *testing.T) {
	gmstest.TestSpatialIndexScripts(t, start(t, off, noSpatial))
}
func TestSpatialInsertInto(t *testing.T) { gmstest.TestSpatialInsertInto(t, start(t, off, noSpatial)) }
func TestSpatialUpdate(t *testing.T)     { gmstest.TestSpatialUpdate(t, start(t, off, noSpatial)) }
func TestSpatialDelete(t *testing.T)     { gmstest.TestSpatialDelete(t, start(t, off, noSpatial)) }
func TestFulltextIndexes(t *testing.T) {
	gmstest.TestFulltextIndexes(t, start(t, off, "FULLTEXT indexes are not implemented"))
}
func TestVectorIndexes(t *testing.T) {
	gmstest.TestVectorIndexes(t, start(t, off, "vector indexes are not implemented"))
}
func TestForeignKeys(t *testing.T) {
	gmstest.TestForeignKeys(t, start(t, core, ""))
}
func TestCreateForeignKeys(t *testing.T) {
	gmstest.TestCreateForeignKeys(t, start(t, core, ""))
}
func TestDropForeignKeys(t *testing.T) {
	gmstest.TestDropForeignKeys(t, start(t, core, ""))
}
func TestStatistics(t *testing.T) {
	gmstest.TestStatistics(t, start(t, off, "tests GMS's in-memory ANALYZE TABLE histograms, not the storage engine"))
}
func TestLoadData(t *testing.T) {
	gmstest.TestLoadData(t, start(t, off, "LOAD DATA reads fixture files by paths relative to the GMS module's own test directory"))
}

// TestEvents checks EVENT DDL and metadata (CREATE/ALTER/DROP/SHOW EVENT,
// information_schema.events); lockstep stores events but never runs them,
// which none of these scripts waits for.
func TestEvents(t *testing.T) {
	gmstest.TestEvents(t, start(t, core, ""))
}
