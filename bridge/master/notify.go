package master

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// notifier makes the master's calls to slave APIs, asynchronously: one
// queue per node API, served in order by a goroutine that lives while the
// queue has work, each call bounded by a timeout. A publisherUpdate still
// queued is replaced by a newer one for the same topic, since only the
// latest publisher list matters.
type notifier struct {
	timeout  time.Duration
	log      zerolog.Logger
	client   *http.Client
	answered func(a action, code int)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	queues map[string][]action
	closed bool
}

func newNotifier(timeout time.Duration, log zerolog.Logger, answered func(action, int)) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &notifier{
		timeout:  timeout,
		log:      log,
		answered: answered,
		// No proxy: nodes are reached directly, whatever HTTP_PROXY says.
		client: &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     30 * time.Second,
		}},
		ctx:    ctx,
		cancel: cancel,
		queues: map[string][]action{},
	}
}

// enqueue schedules a call.
func (n *notifier) enqueue(a action) {
	api := a.target()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	q, running := n.queues[api]
	if pu, ok := a.(publisherUpdate); ok {
		for i, queued := range q {
			if old, ok := queued.(publisherUpdate); ok && old.Topic == pu.Topic {
				q[i] = pu
				return
			}
		}
	}
	n.queues[api] = append(q, a)
	if !running {
		n.wg.Add(1)
		go n.drain(api)
	}
}

// drain makes api's queued calls until its queue is empty.
func (n *notifier) drain(api string) {
	defer n.wg.Done()
	for {
		n.mu.Lock()
		q := n.queues[api]
		if len(q) == 0 {
			delete(n.queues, api)
			n.mu.Unlock()
			return
		}
		a := q[0]
		n.queues[api] = q[1:]
		n.mu.Unlock()
		n.do(a)
	}
}

// do makes one call and logs its outcome.
func (n *notifier) do(a action) {
	var (
		method string
		params []any
	)
	switch ta := a.(type) {
	case publisherUpdate:
		method, params = "publisherUpdate", []any{"/master", ta.Topic, ta.Publishers}
	case paramUpdate:
		method, params = "paramUpdate", []any{"/master", ta.Key, ta.Value}
	case shutdownNode:
		method, params = "shutdown", []any{"/master", fmt.Sprintf("[%s] Reason: %s", ta.CallerID, ta.Reason)}
	default:
		return
	}
	start := time.Now()
	code, err := n.call(a.target(), method, params)
	ev := n.log.Debug()
	if err != nil {
		ev = n.log.Warn().Err(err)
	}
	ev.Str("api", a.target()).Str("method", method).Int("code", code).
		Dur("took", time.Since(start)).Msg("slave call")
	if err == nil && n.answered != nil {
		n.answered(a, code)
	}
}

// call makes an XML-RPC call on a slave API and returns the reply's code.
func (n *notifier) call(api, method string, params []any) (int, error) {
	var body bytes.Buffer
	if err := encodeCall(&body, method, params); err != nil {
		return 0, fmt.Errorf("%s on %s: encode: %w", method, api, err)
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.timeout)
	defer cancel()
	return postCall(ctx, n.client, api, method, &body)
}

// postCall posts an encoded call to an XML-RPC URI and returns the code of
// the [code, status, value] reply.
func postCall(ctx context.Context, client *http.Client, uri, method string, body *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, body)
	if err != nil {
		return 0, fmt.Errorf("%s on %s: %w", method, uri, err)
	}
	req.Header.Set("Content-Type", "text/xml")
	res, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s on %s: %w", method, uri, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16)) //nolint:errcheck // draining only
		return 0, fmt.Errorf("%s on %s: HTTP status %s", method, uri, res.Status)
	}
	v, err := decodeResponse(io.LimitReader(res.Body, maxRequestBytes))
	if err != nil {
		return 0, fmt.Errorf("%s on %s: %w", method, uri, err)
	}
	t, ok := v.([]any)
	if !ok || len(t) != 3 {
		return 0, fmt.Errorf("%s on %s: reply is not a [code, status, value] triple", method, uri)
	}
	code, ok := t[0].(int)
	if !ok {
		return 0, fmt.Errorf("%s on %s: reply code is a %T", method, uri, t[0])
	}
	return code, nil
}

// close abandons queued and running calls and waits for the goroutines.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	for api := range n.queues {
		n.queues[api] = n.queues[api][:0]
	}
	n.mu.Unlock()
	n.cancel()
	n.wg.Wait()
	n.client.CloseIdleConnections()
}
