package linux

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// WriteFileAtomic creates a file, replaces it, and leaves nothing else in
// its folder.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	for _, want := range []string{"first", "second, longer"} {
		if err := WriteFileAtomic(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != want {
			t.Fatalf("read %q, %v; want %q", b, err, want)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o644 {
			t.Fatalf("mode %v, %v; want 0644", st.Mode(), err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Fatalf("folder holds %d entries, want only summary.json", len(ents))
		}
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Fatal("no error writing into a missing folder")
	}
}

// UnnamedFile gives a file that reads back what was written to it and
// never appears in its folder.
func TestUnnamedFile(t *testing.T) {
	dir := t.TempDir()
	f, err := UnnamedFile(dir, ".x-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("chunk index")); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("folder holds %v (%v), want nothing", ents, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if err != nil || string(got) != "chunk index" {
		t.Fatalf("read back %q, %v", got, err)
	}
}
