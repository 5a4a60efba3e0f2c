package main

import "regexp"

// rule is one cause of failures: the skip list gets a group per rule.
// Patterns are matched against "<test name>\t<first error line>".
type rule struct {
	key      string
	kind     string // bug, feature, harness
	reason   string
	patterns []string
	texts    []string // entries added by hand (a script's setup statement, ...)
	crash    bool     // the texts crash the test binary: always skipped
	// byName: skip the rule's failures by test name where the evaluation
	// hook can (the statement runs, only its check is skipped), not by
	// text — for a statement whose effects later ones in its script need.
	byName bool

	compiled []*regexp.Regexp
}

var unclassified = rule{key: "UNCLASSIFIED", kind: "unclassified", reason: "TODO: not classified yet"}

// excludeTexts are never emitted as text entries (they name many passing
// tests; the failing ones are covered by another entry).
var excludeTexts = map[string]bool{
	"SHOW CREATE TABLE test2;": true, // covered by the "Table collation is respected" setup statement
}

func classify(name, msg string) *rule {
	s := name + "\t" + msg
	for i := range rules {
		r := &rules[i]
		if r.compiled == nil {
			for _, p := range r.patterns {
				r.compiled = append(r.compiled, regexp.MustCompile(p))
			}
		}
		for _, re := range r.compiled {
			if re.MatchString(s) {
				return r
			}
		}
	}
	return nil
}

// rules, most important first within each kind. The first matching rule
// wins.
var rules = []rule{
	// ---- (a) lockstep bugs
	{key: "AUTOINC", kind: "bug",
		reason:   "AUTO_INCREMENT: explicit FLOAT/DOUBLE values do not advance the counter",
		patterns: []string{`auto_increment_on_(float|double)`}},
	{key: "JSONTYPES", kind: "bug",
		reason: "JSON values lose their type through storage (UNSIGNED INTEGER comes back as INTEGER, " +
			"DATE/DATETIME/DECIMAL as STRING/DOUBLE): the row codec stores JSON as text",
		patterns: []string{`^TestJsonScripts`}},
	{key: "ALTERCONV", kind: "bug",
		reason: "ALTER TABLE MODIFY COLUMN to an ENUM that lacks an existing value fails with a plain error " +
			"(\"value b is not valid for this Enum\") instead of ER_DATA_TRUNCATED (\"Data truncated for column\")",
		patterns: []string{`Expected error of type &\{Data truncated for column '%s'\} but got value .* is not valid for this Enum`}},
	{key: "EVENTRENAME", kind: "bug",
		reason: "ALTER EVENT ... RENAME TO the name of an existing event succeeds instead of failing with " +
			"ER_EVENT_ALREADY_EXISTS (sql.ErrEventAlreadyExists)",
		patterns: []string{`^TestEvents/invalid_ALTER_EVENT_actions/ALTER_EVENT_my_event2_RENAME_TO_my_event1`}},

	// ---- (b) features lockstep does not have
	{key: "FKEXT", kind: "feature",
		reason: "a foreign key cannot use a parent index extended by its implicit primary key columns " +
			"(lockstep indexes are not sql.ExtendedIndex)",
		patterns: []string{`Referenced_index_includes_implicit_primary_key_columns`}},
	{key: "SPATIAL", kind: "feature",
		reason:   "spatial types are not implemented (GEOMETRY/POINT/... columns are not storable)",
		patterns: []string{`does not support columns of type`}},
	{key: "COLLATE", kind: "feature",
		reason: "ALTER TABLE ... COLLATE (changing a table's default collation) is not implemented",
		patterns: []string{`cannot have its collation altered`, `ALTER_TABLE_does_not_change_column_collations`,
			`Table_collation_is_respected`},
		texts: []string{"CREATE TABLE test1 (pk BIGINT PRIMARY KEY, v1 VARCHAR(255)) COLLATE utf16_unicode_ci;"}},
	{key: "ROWLEN", kind: "feature",
		reason:   "MySQL's 65,535-byte row size limit is not enforced (GMS leaves it to the storage engine)",
		patterns: []string{`^TestRowLimit`, `multi_alter_with_invalid_schemas`}},
	// ---- (c) expectations tied to GMS's memory engine / reference harness
	{key: "INDEXORDER", kind: "harness",
		reason: "expected output lists indexes sorted by name (the memory engine's order); lockstep reports " +
			"them in creation order, as MySQL does",
		patterns: []string{`SHOW_CREATE_TABLE_mytaBLE`, `test_index_naming`, `CREATE_TABLE_t1_LIKE_mytable`,
			`index\(b1\(10\)\)`, `GROUP_CONCAT\(column_name_ORDER_BY_seq_in_index\)`}},
	{key: "FKSHOW", kind: "harness",
		reason: "SHOW CREATE TABLE prints a foreign key's columns separated by \", \" as MySQL 8 does " +
			"(FOREIGN KEY (`a`, `b`) REFERENCES `p` (`x`, `y`)); go-mysql-server's expectations use \",\"",
		patterns: []string{`SHOW_CREATE_TABLE_fk_TBL`, `Reordered_foreign_key_columns_do_match/Show_create_table`}},
	{key: "FKRESOLVE", kind: "harness",
		reason: "a child row without a parent, after keys were created with foreign_key_checks=0, fails with " +
			"go-mysql-server's child-violation error rather than its not-resolved error (both are MySQL's 1452; " +
			"lockstep keys are always resolved, as MySQL has no such state)",
		patterns: []string{`Delayed_foreign_key_resolution`}},
	{key: "TABLESTATUS", kind: "harness",
		reason: "SHOW TABLE STATUS Avg_row_length/Data_length are size estimates; the expected values are the " +
			"memory engine's (lockstep estimates 200 bytes a row)",
		patterns: []string{`^TestShowTableStatus`}},
	{key: "ERRTEXT", kind: "harness",
		reason: "expected error text is GMS's \"duplicate primary key given: [k]\"; lockstep reports MySQL's " +
			"\"Duplicate entry 'k' for key 't.PRIMARY'\"",
		patterns: []string{`Not equal: expected: "duplicate primary key given`}},
	{key: "MYSQLSCHEMA", kind: "harness",
		reason: "information_schema lists the mysql schema (its account, help and log tables), as MySQL does and " +
			"mysqldump --all-databases needs (issue 9 item 7); GMS's expected rows leave it out",
		patterns: []string{`FROM_information_schema\.(SCHEMATA|schemata_extensions)\t`, `Issue_#5482/SELECT_T\.TABLE_NAME_AS_label`},
		texts:    []string{"Issue #5482"}}, // TestCharsetCollationEngine has no query hook: skipped by script name
	{key: "ROOTUSER", kind: "harness",
		reason: "sqlfront.New creates root@'%' (the reference harness only root@localhost), which shows up in " +
			"mysql.user / information_schema.user_attributes and lets the anonymous-user check pass",
		patterns: []string{`^TestUserPrivileges/.*mysql\.user`, `user_attributes`, `Anonymous_User`}},
	{key: "WARNORDER", kind: "harness",
		reason: "SHOW WARNINGS lists conditions in the order they were raised, as MySQL does " +
			"(sqlfront warningOrderRule); GMS's expectations list them newest first",
		patterns: []string{`^TestWarnings(/|\t)`}},
	{key: "INSERTID", kind: "harness", byName: true,
		reason: "an INSERT's OK packet carries MySQL's insert id (sqlfront insertid.go: the first generated " +
			"AUTO_INCREMENT value, else the last row's; checked against MariaDB in test/differential " +
			"dml.sql); GMS's expectations give the first row's value",
		patterns: []string{`sql_mode=NO_auto_value_ON_ZERO/`, `issue_8611:_insert_ignore_on_enum_type_column/`,
			`last_insert_id\(default\)_behavior/`}},
	{key: "MEMPROCS", kind: "harness",
		reason:   "calls external stored procedures that only the memory harness registers",
		patterns: []string{`memory_admin_only`, `memory_variadic_add`}},
	{key: "PKPREFIX", kind: "harness",
		reason: "lockstep accepts a prefix length in a PRIMARY KEY (e.g. PRIMARY KEY (v(10))); GMS rejects it " +
			"and the test expects that rejection",
		patterns: []string{`_primary_key_prefix/`}},
	{key: "PREFIXPLAN", kind: "harness",
		reason: "plan check only: for ORDER BY on a TEXT column with a unique index without prefix length " +
			"(MariaDB syntax) the memory engine uses no index, lockstep uses it (results are right)",
		patterns: []string{`unique_indexes_on_TEXT/BLOB_columns_with_no_prefix_length`}},
	{key: "FLAKY", kind: "harness",
		reason: "timing-dependent: now() = sysdate() is false when a second boundary passes between statement " +
			"start and evaluation (seen on a loaded 2-vCPU machine)",
		patterns: []string{`now\(\)_=_sysdate\(\)`},
		texts:    []string{"select now() = sysdate(), sleep(0.5), now(6) < sysdate(6);"}},
	{key: "CURSOR", kind: "harness",
		reason: "expects a cursor to be materialised at OPEN; lockstep's cursor reads rows written after OPEN " +
			"(MySQL leaves this unspecified: cursors are 'asensitive')",
		patterns: []string{`FETCH_captures_state_at_OPEN`}},
	{key: "SYSVARS", kind: "harness",
		reason: "lockstep adds MySQL's session variable warning_count, which GMS lacks, so a SHOW VARIABLES " +
			"listing that reaches it has one row more than the memory engine's",
		patterns: []string{`SHOW_VARIABLES_WHERE_Variable_name_>_'version'`}},
	{key: "DROPDBNOTE", kind: "harness", byName: true,
		reason: "expects GMS's wording of Note 1008 (Can't drop database mydb; ... with a trailing space); " +
			"lockstep words it as MySQL does, the name quoted (checked against MariaDB in test/differential ddl.sql)",
		patterns: []string{`DROP_DATABASE_IF_EXISTS_correctly_works\./SHOW_WARNINGS`}},
	{key: "CTEDEPTH", kind: "harness",
		reason: "expects GMS's recursive CTE limit (1105 after 10,001 iterations, whatever @@cte_max_recursion_depth says); " +
			"lockstep applies @@cte_max_recursion_depth as MySQL does (default 1000, then 3636; internal/sqlfront/recursivecte.go), " +
			"so these recursions fail with 3636 (the script's setup needs 5,000 iterations)",
		patterns: []string{`with_recursive_t_\(n\)_as_\(select_\(1\)_from_dual_union_all_select_n(_\+_1)?_from_t_where_n_<_(2|10002)\)`,
			`histogram_bucket_merging_error_for_implementor_buckets`}},
	{key: "MAXPACKET", kind: "harness",
		reason: "expects GMS's max_allowed_packet default, 1 GiB (enforced nowhere); lockstep has MySQL 8's " +
			"64 MiB and enforces it (internal/server/maxpacket.go)",
		patterns: []string{`max_allowed_packet;`}},
}
