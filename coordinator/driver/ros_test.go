package driver

import (
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
