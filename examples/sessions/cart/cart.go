package cart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
)

// Limits of a cart and of a request.
const (
	MaxQty         = 1000   // the most one add may add of a SKU
	MaxLineQty     = 10_000 // the most of one SKU a cart may hold
	MaxItems       = 100    // the most distinct SKUs a cart may hold
	RememberedKeys = 20     // Idempotency-Keys a cart remembers (its latest adds)
)

// maxBody is the most bytes the body of an add may have.
const maxBody = 4 << 10

// Defaults of the options.
const (
	DefaultTTL            = 30 * time.Minute
	DefaultRequestTimeout = 10 * time.Second
)

// Cart is a cart as the service returns it.
type Cart struct {
	Session string    `json:"session"`
	Items   []Item    `json:"items"`   // by SKU
	Version int64     `json:"version"` // the stored item's version: 1 after the first add
	Expires time.Time `json:"expires"` // absent from then on, unless changed before
}

// Item is one line of a cart, and the body of an add.
type Item struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// record is a cart as stored: one item per session.
type record struct {
	Session string         `dynamo:"session,hash"`
	Items   map[string]int `dynamo:"items,omitempty"`     // SKU → quantity
	Keys    []string       `dynamo:"idem_keys,omitempty"` // Idempotency-Keys of the latest adds, oldest first
	Expires time.Time      `dynamo:"expires,ttl,unixtime"`
	Version int64          `dynamo:"version,version"`
}

// live reports whether r is a cart that exists and has not expired at now.
// A stored cart whose expiry has passed is absent, whether or not DynamoDB's
// TTL has deleted it yet.
func (r record) live(now time.Time) bool {
	return r.Version != 0 && now.Before(r.Expires)
}

func (r record) view() Cart {
	c := Cart{Session: r.Session, Items: []Item{}, Version: r.Version, Expires: r.Expires.UTC()}
	for _, sku := range slices.Sorted(maps.Keys(r.Items)) {
		c.Items = append(c.Items, Item{SKU: sku, Qty: r.Items[sku]})
	}
	return c
}

// Server serves the carts of one table. It is an http.Handler, safe for
// concurrent use, and keeps no state besides counters: run as many
// instances as you like on one table.
type Server struct {
	table     *dynamo.Table[record]
	mux       *http.ServeMux
	clock     clock.Clock
	ttl       time.Duration
	timeout   time.Duration
	log       *slog.Logger
	conflicts atomic.Int64
}

// Option configures a Server.
type Option func(*Server)

// WithTTL sets how long a cart lives after its last change (default
// DefaultTTL, 30 minutes). Must be at least a second.
func WithTTL(d time.Duration) Option { return func(s *Server) { s.ttl = d } }

// WithClock sets the clock expiry times are read from and written with
// (default clock.Real()). Tests pass a *clock.Fake. DynamoDB deletes expired
// items by its own clock, which is why the clock must tell real time in
// production.
func WithClock(c clock.Clock) Option { return func(s *Server) { s.clock = c } }

// WithRequestTimeout bounds each request's work, retries included (default
// DefaultRequestTimeout, 10 s); the request's own context bounds it too.
func WithRequestTimeout(d time.Duration) Option { return func(s *Server) { s.timeout = d } }

// WithLogger sets where the server logs failures that are not the client's
// fault (default: nowhere).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// New returns a Server for the carts in table, read and written through m.
// It sends no request; CreateTable creates the table.
func New(m *dynamo.Mapper, table string, opts ...Option) (*Server, error) {
	t, err := dynamo.NewTable[record](m, table)
	if err != nil {
		return nil, err
	}
	s := &Server{
		table: t, clock: clock.Real(), ttl: DefaultTTL, timeout: DefaultRequestTimeout,
		log: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(s)
	}
	switch {
	case s.ttl < time.Second:
		return nil, fmt.Errorf("cart: WithTTL(%v): a cart must live at least 1s", s.ttl)
	case s.timeout <= 0:
		return nil, fmt.Errorf("cart: WithRequestTimeout(%v): give a positive duration", s.timeout)
	case s.clock == nil || s.log == nil:
		return nil, errors.New("cart: WithClock and WithLogger need a non-nil argument")
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /carts/{session}/items", s.add)
	s.mux.HandleFunc("DELETE /carts/{session}/items/{sku}", s.remove)
	s.mux.HandleFunc("GET /carts/{session}", s.get)
	return s, nil
}

// CreateTable creates the cart table — hash key "session", on-demand, TTL
// on "expires" — and waits until it is active. A table that exists already
// with that key is accepted as it is (its TTL setting included). ctx bounds
// the whole call.
func (s *Server) CreateTable(ctx context.Context) error {
	return s.table.CreateTable(ctx, dynamo.IfNotExists())
}

// Table returns the name of the table the server uses.
func (s *Server) Table() string { return s.table.Name() }

// Conflicts returns how many version conflicts this server's requests have
// met so far: each one a write that another instance's write beat, redone by
// Update on the cart the conflict carried.
func (s *Server) Conflicts() int64 { return s.conflicts.Load() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// A request error: the status and a message that says what to fix.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func clientErr(status int, format string, args ...any) error {
	return &httpError{status, fmt.Sprintf(format, args...)}
}

var (
	sessionRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
	skuRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	keyRE     = regexp.MustCompile(`^[\x21-\x7e]{1,64}$`) // printable ASCII, no spaces
)

const example = `{"sku":"book-42","qty":1}`

func session(r *http.Request) (string, error) {
	id := r.PathValue("session")
	if !sessionRE.MatchString(id) {
		return "", clientErr(http.StatusBadRequest,
			"invalid session %q: use 1 to 128 letters, digits, '_' or '-'", id)
	}
	return id, nil
}

func checkSKU(sku string) error {
	if !skuRE.MatchString(sku) {
		return clientErr(http.StatusBadRequest,
			"invalid sku %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", sku)
	}
	return nil
}

// readItem decodes and checks the body of an add.
func readItem(w http.ResponseWriter, r *http.Request) (Item, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	var it Item
	err := dec.Decode(&it)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return it, clientErr(http.StatusRequestEntityTooLarge, "body over %d bytes: send one item like %s", maxBody, example)
	case errors.Is(err, io.EOF):
		return it, clientErr(http.StatusBadRequest, "empty body: send one item like %s", example)
	case err != nil:
		return it, clientErr(http.StatusBadRequest, "invalid body (%v): send one JSON object like %s", err, example)
	}
	if err := checkSKU(it.SKU); err != nil {
		return it, err
	}
	if it.Qty == 0 {
		return it, clientErr(http.StatusBadRequest, "qty missing or 0: add 1 to %d at a time, e.g. %s", MaxQty, example)
	}
	if it.Qty < 1 || it.Qty > MaxQty {
		return it, clientErr(http.StatusBadRequest, "invalid qty %d: add 1 to %d at a time, e.g. %s", it.Qty, MaxQty, example)
	}
	return it, nil
}

var (
	errReplayed = errors.New("idempotency key seen")
	errNoCart   = errors.New("no cart")
	errGone     = errors.New("SKU already removed")
)

// add handles POST /carts/{session}/items.
func (s *Server) add(w http.ResponseWriter, r *http.Request) {
	id, err := session(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	it, err := readItem(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" && !keyRE.MatchString(key) {
		s.fail(w, r, clientErr(http.StatusBadRequest,
			"invalid Idempotency-Key %q: use 1 to 64 printable ASCII characters without spaces, e.g. a UUID", key))
		return
	}
	var replay record
	addFn := func(c record) (record, error) {
		now := s.clock.Now()
		if !c.live(now) {
			c = record{Session: c.Session, Version: c.Version} // expired or new: a fresh cart
		}
		if key != "" && slices.Contains(c.Keys, key) {
			replay = c
			return c, errReplayed
		}
		items := maps.Clone(c.Items)
		if items == nil {
			items = map[string]int{}
		}
		_, had := items[it.SKU]
		switch {
		case !had && len(items) >= MaxItems:
			return c, clientErr(http.StatusConflict, "cart %q holds %d SKUs, the most it may: remove one first", id, MaxItems)
		case items[it.SKU]+it.Qty > MaxLineQty:
			return c, clientErr(http.StatusConflict, "cart %q holds %d of %q; adding %d would exceed %d: add less",
				id, items[it.SKU], it.SKU, it.Qty, MaxLineQty)
		}
		items[it.SKU] += it.Qty
		c.Items = items
		if key != "" {
			keys := append(slices.Clone(c.Keys), key)
			c.Keys = keys[max(0, len(keys)-RememberedKeys):]
		}
		c.Expires = s.expiry(now)
		return c, nil
	}
	saved, err := s.update(r, id, addFn)
	if errors.Is(err, dynamo.ErrUnknownOutcome) && key != "" {
		// A database answer was lost and someone changed the cart before
		// the SDK's retry: our add may or may not be in it. The key tells,
		// so running it again is safe: it replays if the add landed.
		saved, err = s.update(r, id, addFn)
	}
	if errors.Is(err, errReplayed) {
		w.Header().Set("Idempotent-Replayed", "true")
		s.reply(w, http.StatusOK, replay.view())
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, saved.view())
}

// remove handles DELETE /carts/{session}/items/{sku}.
func (s *Server) remove(w http.ResponseWriter, r *http.Request) {
	id, err := session(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sku := r.PathValue("sku")
	if err := checkSKU(sku); err != nil {
		s.fail(w, r, err)
		return
	}
	again := false // running again after an unknown outcome
	removeFn := func(c record) (record, error) {
		now := s.clock.Now()
		if !c.live(now) {
			return c, errNoCart
		}
		if _, ok := c.Items[sku]; !ok {
			if again {
				return c, errGone // our remove landed (or another one did): done
			}
			return c, clientErr(http.StatusNotFound, "cart %q holds no %q: nothing to remove", id, sku)
		}
		c.Items = maps.Clone(c.Items)
		delete(c.Items, sku)
		c.Expires = s.expiry(now)
		return c, nil
	}
	saved, err := s.update(r, id, removeFn)
	if errors.Is(err, dynamo.ErrUnknownOutcome) {
		// Removing is idempotent: run it again, and take a missing SKU as
		// the remove having landed.
		again = true
		var gone record
		saved, err = s.update(r, id, func(c record) (record, error) {
			gone = c
			return removeFn(c)
		})
		if errors.Is(err, errGone) {
			saved, err = gone, nil
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, saved.view())
}

// get handles GET /carts/{session}.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id, err := session(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	// Strongly consistent: a cart changed through another instance a moment
	// ago reads as changed.
	c, err := s.table.Load(ctx, record{Session: id}, dynamo.ConsistentRead())
	switch {
	case errors.Is(err, dynamo.ErrNotFound) || err == nil && !c.live(s.clock.Now()):
		s.fail(w, r, errNoCart)
	case err != nil:
		s.fail(w, r, err)
	default:
		s.reply(w, http.StatusOK, c.view())
	}
}

// update runs fn on the cart of session id in Update's retry loop, bounded
// by the request's context and the server's timeout, and counts the
// conflicts it met.
func (s *Server) update(r *http.Request, id string, fn func(record) (record, error)) (record, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	calls := 0
	saved, err := s.table.Update(ctx, record{Session: id}, func(c record) (record, error) {
		calls++ // every call after the first follows a version conflict
		return fn(c)
	})
	if calls > 1 {
		s.conflicts.Add(int64(calls - 1))
	}
	return saved, err
}

// expiry is the expiry time of a cart changed at now, in whole seconds as
// DynamoDB's TTL stores it, so that what a write returns and what a read
// returns agree.
func (s *Server) expiry(now time.Time) time.Time {
	return now.Add(s.ttl).Truncate(time.Second).UTC()
}

func (s *Server) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers with the status err calls for and a JSON body
// {"error": "..."}.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	switch {
	case errors.As(err, &he):
	case errors.Is(err, errNoCart):
		he = &httpError{http.StatusNotFound, fmt.Sprintf(
			"no cart for session %q: it was never created, or expired %v after its last change; add an item to start one",
			r.PathValue("session"), s.ttl)}
	case r.Context().Err() != nil:
		// The client has gone: nobody reads the answer.
		he = &httpError{http.StatusServiceUnavailable, "request cancelled"}
	case errors.Is(err, dynamo.ErrUnknownOutcome):
		// Only an add without an Idempotency-Key gets here.
		s.log.Warn("cart change may or may not have been applied", "method", r.Method, "path", r.URL.Path, "err", err)
		he = &httpError{http.StatusServiceUnavailable, "the add may or may not have been applied (a database answer was lost): " +
			"GET the cart before adding again, or send an Idempotency-Key header to make retries safe"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, dynamo.ErrVersionConflict):
		s.log.Warn("cart request gave up", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "1")
		he = &httpError{http.StatusServiceUnavailable, "the cart is too busy or the database too slow right now: retry shortly"}
	default:
		s.log.Error("cart request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		he = &httpError{http.StatusInternalServerError, "internal error: retry, and report it if it persists"}
	}
	s.reply(w, he.status, map[string]string{"error": he.msg})
}
