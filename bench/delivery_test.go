package bench

import (
	"bytes"
	"testing"
)

// A short delivery run: every gated message reaches every subscriber (the
// figures themselves are printed, not asserted: see `tcs bench delivery`).
func TestDelivery(t *testing.T) {
	var out bytes.Buffer
	res, err := Delivery(&out, DeliveryOpts{Subscribers: 3, Messages: 200})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.GatedLost != 0 || res.GatedCall.N != 200 || res.GatedAll.N != 200 {
		t.Errorf("gated: lost %d, calls %d, deliveries %d; want 0, 200, 200", res.GatedLost, res.GatedCall.N, res.GatedAll.N)
	}
	if res.GatedCall.Med <= 0 || res.PlainCall.Med <= 0 {
		t.Errorf("empty measurements: %+v", res)
	}
}
