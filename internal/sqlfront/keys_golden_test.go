package sqlfront

import "testing"

// TestKeyGolden: stored rows, primary keys and index keys of the fixture
// tables are the bytes in testdata/keys.golden.
func TestKeyGolden(t *testing.T) {
	f := loadKeyFixture(t)
	var got []string
	for _, name := range keyFixtureTables {
		te := fixtureEntry(t, f, name)
		specs := te.load().indexSpecs()
		got = append(got, goldenLine("table", name))
		pks, rows := storedRows(t, f, te)
		for i := range rows {
			got = append(got, goldenLine("row", pks[i], rows[i]))
			for j, s := range specs {
				k, null, err := s.Key(rows[i])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, goldenLine("key", j, s.Name, null, k))
			}
		}
	}
	compareGolden(t, got)
}
