package driver

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The start-up's rest load is the clients' CPU over each whole second of
// wall, polls falling where they may; nothing before the first second.
func TestRestLoadPerSecond(t *testing.T) {
	var l restLoad
	t0 := time.Unix(1000, 0)
	l.add(t0, int64(5*time.Second)) // before the first poll: not counted
	if l.share != -1 {
		t.Fatalf("share after the first poll = %v, want -1 (none yet)", l.share)
	}
	for k := 1; k <= 40; k++ { // 20 ms polls, 15 ms of CPU each: 75 %
		l.add(t0.Add(time.Duration(k)*20*time.Millisecond), int64(15*time.Millisecond))
		if l.share != -1 {
			t.Fatalf("share after %d polls = %v, before a whole second", k, l.share)
		}
	}
	for k := 41; k <= 50; k++ {
		l.add(t0.Add(time.Duration(k)*20*time.Millisecond), int64(15*time.Millisecond))
	}
	if l.share < 0.749 || l.share > 0.751 {
		t.Fatalf("share over the first second = %v, want 0.75", l.share)
	}
	// A slow poll (the clients saturating the CPU) closes the next window.
	l.add(t0.Add(2500*time.Millisecond), int64(1500*time.Millisecond))
	if l.share < 0.999 || l.share > 1.001 {
		t.Fatalf("share over a 1.5 s window of 1.5 s of CPU = %v, want 1", l.share)
	}
}

// A start-up time-out names up to lateListed clients with their reasons
// and logs, and the rest by name on one line.
func TestWriteLateListsTheFirstAndNamesTheRest(t *testing.T) {
	var late []lateClient
	for i := range 11 {
		late = append(late, lateClient{fmt.Sprintf("pd%02d", i), fmt.Sprintf("not subscribed to its clock /tcs/pd%02d/clock (log pd%02d.log)", i, i)})
	}
	var b strings.Builder
	writeLate(&b, late[:2])
	if want := "\n  client \"pd00\": not subscribed to its clock /tcs/pd00/clock (log pd00.log)" +
		"\n  client \"pd01\": not subscribed to its clock /tcs/pd01/clock (log pd01.log)"; b.String() != want {
		t.Errorf("two clients:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeLate(&b, late)
	lines := strings.Split(b.String(), "\n")[1:]
	if len(lines) != lateListed+1 {
		t.Fatalf("%d lines for %d clients, want %d:\n%s", len(lines), len(late), lateListed+1, b.String())
	}
	if want := `  client "pd07": not subscribed to its clock /tcs/pd07/clock (log pd07.log)`; lines[lateListed-1] != want {
		t.Errorf("line %d = %q, want %q", lateListed, lines[lateListed-1], want)
	}
	if want := "  3 more clients not ready (logs in the same folder): pd08 pd09 pd10"; lines[lateListed] != want {
		t.Errorf("last line = %q, want %q", lines[lateListed], want)
	}
}
