package plot

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func decodePNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("%s: %v, want about 605 x 378", path, b)
	}
}

func TestSaveLines(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tps.png")
	err := SaveLines(p, Lines{Title: "t", XLabel: "threads", YLabel: "tps", Points: true, LogX: true, MarkName: "checkpoint",
		Series: []Series{{Name: "a", X: []float64{1, 16, 64}, Y: []float64{10, 100, 90}, Marks: []float64{16}}, {Name: "b", X: []float64{16}, Y: []float64{50}}}})
	if err != nil {
		t.Fatal(err)
	}
	decodePNG(t, p)
	if err := SaveLines(filepath.Join(dir, "x.png"), Lines{Series: []Series{{Name: "a", X: []float64{1}, Y: nil}}}); err == nil {
		t.Error("x and y of different lengths: no error")
	}
	if err := SaveLines(filepath.Join(dir, "x.png"), Lines{}); err == nil {
		t.Error("no series: no error")
	}
	if err := SaveLines(filepath.Join(dir, "x.svg"), Lines{Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{1}}}}); err == nil || !strings.Contains(err.Error(), "png") {
		t.Errorf("an .svg path: %v", err)
	}
}

func TestSaveBars(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lat.png")
	err := SaveBars(p, GroupedBars{Title: "t", YLabel: "ms", Groups: []string{"p50", "p95", "p99"},
		Bars: []Bars{{Name: "a", Values: []float64{1, 2, 3}}, {Name: "b", Values: []float64{2, 4, 8}}}})
	if err != nil {
		t.Fatal(err)
	}
	decodePNG(t, p)
	if err := SaveBars(p, GroupedBars{Groups: []string{"p50"}, Bars: []Bars{{Name: "a", Values: []float64{1, 2}}}}); err == nil {
		t.Error("values not matching the groups: no error")
	}
}
