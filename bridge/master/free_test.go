package master

import (
	"strconv"
	"strings"
	"testing"
)

func TestFreeURI(t *testing.T) {
	lo := ephemeralLow()
	for i := 0; i < 20; i++ {
		uri, err := FreeURI()
		if err != nil {
			t.Fatal(err)
		}
		hp, err := ParseURI(uri)
		if err != nil {
			t.Fatalf("FreeURI = %q: %v", uri, err)
		}
		port := hp[strings.LastIndexByte(hp, ':')+1:]
		n, err := strconv.Atoi(port)
		if err != nil {
			t.Fatalf("FreeURI = %q: port: %v", uri, err)
		}
		if lo > 10000 && (n < 10000 || n >= lo) {
			t.Errorf("port %d, want in [10000, %d): below the ephemeral range", n, lo)
		}
	}
}
