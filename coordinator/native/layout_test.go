package native

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestLayoutMatchesC compiles a C program against tcs_native.h that prints
// the offset and size of every field of struct tcs_shm, and compares them
// with Shm's.
func TestLayoutMatchesC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed: cannot check tcs_native.h against Shm")
	}
	var s Shm
	type field struct {
		c         string
		off, size uintptr
	}
	fields := []field{
		{"magic", unsafe.Offsetof(s.Magic), unsafe.Sizeof(s.Magic)},
		{"version", unsafe.Offsetof(s.Version), unsafe.Sizeof(s.Version)},
		{"obs_len", unsafe.Offsetof(s.ObsLen), unsafe.Sizeof(s.ObsLen)},
		{"period", unsafe.Offsetof(s.Period), unsafe.Sizeof(s.Period)},
		{"obs_time", unsafe.Offsetof(s.ObsTime), unsafe.Sizeof(s.ObsTime)},
		{"out_len", unsafe.Offsetof(s.OutLen), unsafe.Sizeof(s.OutLen)},
		{"in_len", unsafe.Offsetof(s.InLen), unsafe.Sizeof(s.InLen)},
		{"in_time", unsafe.Offsetof(s.InTime), unsafe.Sizeof(s.InTime)},
		{"obs_next", unsafe.Offsetof(s.ObsNext), unsafe.Sizeof(s.ObsNext)},
		{"reserved", unsafe.Offsetof(s.Reserved), unsafe.Sizeof(s.Reserved)},
		{"obs", unsafe.Offsetof(s.Obs), unsafe.Sizeof(s.Obs)},
		{"out", unsafe.Offsetof(s.Out), unsafe.Sizeof(s.Out)},
		{"in", unsafe.Offsetof(s.In), unsafe.Sizeof(s.In)},
		{"post_cap", unsafe.Offsetof(s.PostCap), unsafe.Sizeof(s.PostCap)},
		{"post_head", unsafe.Offsetof(s.PostHead), unsafe.Sizeof(s.PostHead)},
		{"post_tail", unsafe.Offsetof(s.PostTail), unsafe.Sizeof(s.PostTail)},
		{"post_pad", unsafe.Offsetof(s.PostPad), unsafe.Sizeof(s.PostPad)},
		{"posts", unsafe.Offsetof(s.Posts), unsafe.Sizeof(s.Posts)},
	}
	var p Post
	postFields := []field{
		{"ch", unsafe.Offsetof(p.Ch), unsafe.Sizeof(p.Ch)},
		{"n", unsafe.Offsetof(p.N), unsafe.Sizeof(p.N)},
		{"cpu", unsafe.Offsetof(p.CPU), unsafe.Sizeof(p.CPU)},
		{"vals", unsafe.Offsetof(p.Vals), unsafe.Sizeof(p.Vals)},
	}
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"tcs_native.h\"\nint main(void) {\n")
	prog.WriteString("\tprintf(\"sizeof %zu\\n\", sizeof(struct tcs_shm));\n")
	prog.WriteString("\tprintf(\"magic_const %llx\\n\", (unsigned long long)TCS_MAGIC);\n")
	prog.WriteString("\tprintf(\"version_const %d\\n\", TCS_VERSION);\n")
	prog.WriteString("\tprintf(\"max_posts %d\\n\", TCS_MAX_POSTS);\n")
	for _, f := range fields {
		prog.WriteString("\tprintf(\"" + f.c + " %zu %zu\\n\", offsetof(struct tcs_shm, " + f.c + "), sizeof(((struct tcs_shm *)0)->" + f.c + "));\n")
	}
	prog.WriteString("\tprintf(\"sizeof post %zu\\n\", sizeof(struct tcs_post));\n")
	for _, f := range postFields {
		prog.WriteString("\tprintf(\"post." + f.c + " %zu %zu\\n\", offsetof(struct tcs_post, " + f.c + "), sizeof(((struct tcs_post *)0)->" + f.c + "));\n")
	}
	prog.WriteString("\treturn 0;\n}\n")
	out := compileAndRun(t, gcc, prog.String())
	want := []string{
		"sizeof " + itoa(unsafe.Sizeof(s)),
		"magic_const " + strings.ToLower(strconvHex(Magic)),
		"version_const " + itoa(Version),
		"max_posts " + itoa(MaxPosts),
	}
	for _, f := range fields {
		want = append(want, f.c+" "+itoa(f.off)+" "+itoa(f.size))
	}
	want = append(want, "sizeof post "+itoa(unsafe.Sizeof(p)))
	for _, f := range postFields {
		want = append(want, "post."+f.c+" "+itoa(f.off)+" "+itoa(f.size))
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("C layout differs from Go:\nC:\n%s\nGo:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// compileAndRun builds src (see compileC) and returns its output.
func compileAndRun(t *testing.T, gcc, src string) string {
	t.Helper()
	out, err := exec.Command(compileC(t, gcc, src)).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return string(out)
}

// compileC builds src with this directory on the include path and strict
// warnings, and returns the executable's path.
func compileC(t *testing.T, gcc, src string) string {
	t.Helper()
	dir := t.TempDir()
	cfile := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command(gcc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-I", wd, "-o", bin, cfile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}
func itoa[T ~int | ~uintptr | ~uint32 | ~int64](v T) string { return strconv.FormatUint(uint64(v), 10) }

func strconvHex(v uint64) string { return strconv.FormatUint(v, 16) }
