// Package leasetest is the conformance suite of ringflake's lease modules
// (redislease, etcdlease, or a module of your own for another
// coordination service), as net/http/httptest is for HTTP handlers: one
// set of tests that each module runs, through a [Driver], against real
// servers — a shared one, and private ones that a test stops, pauses,
// restarts and wipes. It belongs in tests only; it imports testify.
//
// Leases in the suite live on a mock clock that only the test moves, so
// renewals and expiry happen exactly when a test says. The server's own TTL
// runs on real time and is a minute: long enough never to run out while a
// test runs, unless the test forces it. Only server round trips take real
// time; every wait for one is bounded and returns as soon as it is over.
package leasetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// A Driver gives the suite one lease module and its servers.
type Driver interface {
	// Connect returns a new client of the shared server, closed when the
	// test ends. It fails the test when the server is not configured or
	// does not answer: a lease test that skips proves nothing.
	Connect(t *testing.T) Conn
	// Unreachable returns a client of a loopback port nothing listens on.
	// It must not dial before it is used.
	Unreachable(t *testing.T) Conn
	// StartServer starts a server of the test's own, stopped when the
	// test ends.
	StartServer(t *testing.T) Server
	// DetectsRestart reports whether the module notices that its server
	// restarted (Redis: by its run_id), which may have lost the latest
	// writes, and then holds back the ids it takes, anew or again, for a
	// quiet period.
	DetectsRestart() bool
	// TTLUnit is the granularity of the module's TTLs: a TTL must be a
	// whole number of it.
	TTLUnit() time.Duration
	// ConnectDelayed returns a new client of the shared server whose
	// requests to save a mark the test can hold back and deliver late,
	// and the [Delay] that does it: for a server reached over TCP, a
	// client of a [Proxy] in front of it. It fails the test as Connect
	// does.
	ConnectDelayed(t *testing.T) (Conn, Delay)
}

// A Conn is one client of a server: the module's calls through it, and
// what the tests do to the server's keys behind a lease's back.
type Conn interface {
	// Acquire, Claim and List call the module's.
	Acquire(ctx context.Context, opts lease.Options) (Lease, error)
	Claim(ctx context.Context, node int64, opts lease.Options) (Lease, error)
	List(ctx context.Context, opts lease.Options) ([]lease.Holding, error)

	// Expire ends the lease of node's key now, the way its TTL running
	// out does on the server, and returns once the key is gone.
	Expire(t *testing.T, prefix string, node int64)
	// Delete deletes node's lease key, as an operator might.
	Delete(t *testing.T, prefix string, node int64)
	// Put writes value into node's lease key, as someone else's lease
	// would, and reports whether the key then expires (within a minute).
	Put(t *testing.T, prefix string, node int64, value string) (expires bool)
	// Key reports whether node's lease key exists, and whether it
	// expires (it has a TTL, or lives on a server-side lease).
	Key(t *testing.T, prefix string, node int64) (exists, expires bool)
	// CorruptMark stores a mark that is not a time for node, and returns
	// where, as the module's ringflake.MarkError names it in Path.
	CorruptMark(t *testing.T, prefix string, node int64) (where string)
	// WaitConnected returns once the client reaches its server again
	// after a restart.
	WaitConnected(t *testing.T)
	// Settle makes prefix look like the prefix of a fleet that has been
	// running for longer than a TTL: its epoch exists, so that a lease
	// acquired under it holds its id at once, without the quiet period
	// of a first start. Tests that are not about that quiet period use
	// settled prefixes.
	Settle(t *testing.T, prefix string)
}

// A Server is a server of a test's own. [Process] provides all but
// Connect.
type Server interface {
	// Connect returns a new client of the server, closed when the test
	// ends. The default client fails fast while the server is down; a
	// patient one waits up to a minute for an answer.
	Connect(t *testing.T, patient bool) Conn
	// Stop stops the server; Start starts it again with its data;
	// StartEmpty starts it again with none, like a server that lost it.
	Stop(t *testing.T)
	Start(t *testing.T)
	StartEmpty(t *testing.T)
	// Pause stops the server process without closing its sockets:
	// requests are accepted by the kernel and never answered, like a
	// network partition that drops packets. Resume continues it.
	Pause(t *testing.T)
	Resume(t *testing.T)
}

// Lease is what the suite uses of a module's *Lease.
type Lease interface {
	ringflake.Lease
	ringflake.MarkStore
	MarkAhead() time.Duration
	MaxLead() time.Duration
	WaitHeld(ctx context.Context) error
	Done() <-chan struct{}
	Err() error
	Close(ctx context.Context) error
}

// Calls are a lease module's Acquire, Claim and List, on one client of
// type C: they provide those methods of a [Conn], which a driver's Conn
// gets by embedding them.
type Calls[C any, L Lease] struct {
	Client   C
	Acquirer func(context.Context, C, lease.Options) (L, error)
	Claimer  func(context.Context, C, int64, lease.Options) (L, error)
	Lister   func(context.Context, C, lease.Options) ([]lease.Holding, error)
}

// Acquire calls the module's Acquire.
func (c Calls[C, L]) Acquire(ctx context.Context, opts lease.Options) (Lease, error) {
	return acquired(c.Acquirer(ctx, c.Client, opts))
}

// Claim calls the module's Claim.
func (c Calls[C, L]) Claim(ctx context.Context, node int64, opts lease.Options) (Lease, error) {
	return acquired(c.Claimer(ctx, c.Client, node, opts))
}

// List calls the module's List.
func (c Calls[C, L]) List(ctx context.Context, opts lease.Options) ([]lease.Holding, error) {
	return c.Lister(ctx, c.Client, opts)
}

// acquired returns what a module's Acquire or Claim returned, with a nil
// *Lease as a nil [Lease].
func acquired[L Lease](l L, err error) (Lease, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Run runs every test of the suite against d, each as a subtest.
func Run(t *testing.T, d Driver) {
	for _, tc := range []struct {
		name string
		test func(*testing.T, Driver)
	}{
		{"ConcurrentAcquirersGetDistinctIDs", testConcurrentAcquirers},
		{"ExhaustedRange", testExhaustedRange},
		{"ExpiredIDIsHandedOutAgain", testExpiredIDIsHandedOutAgain},
		{"CloseReleasesTheID", testCloseReleasesTheID},
		{"ListShowsHolders", testListShowsHolders},
		{"RenewalsKeepTheLease", testRenewalsKeepTheLease},
		{"ServerOutage", testServerOutage},
		{"ServerLostItsData", testServerLostItsData},
		{"FirstStartWaitsOutAQuietPeriod", testFirstStart},
		{"RequestsEndAtTheTimeout", testRequestsEndAtTheTimeout},
		{"UnansweredRenewal", testUnansweredRenewal},
		{"StolenLease", testStolenLease},
		{"MarkCarriedToTheNextHolder", testMarkCarriedToTheNextHolder},
		{"PausedHolderCannotCollide", testPausedHolderCannotCollide},
		{"CorruptMark", testCorruptMark},
		{"MarkRoundTrip", testMarkRoundTrip},
		{"MarkAheadIsHalfTheTTL", testMarkAhead},
		{"InvalidOptions", testInvalidOptions},
		{"AcquireServerDown", testAcquireServerDown},
		{"ClaimHoldsAGivenID", testClaim},
		{"ClaimCarriesTheMark", testClaimCarriesTheMark},
		{"ClaimLost", testClaimLost},
		{"LateSaveChangesNothing", testLateSave},
		{"RestartAfterALateSave", testRestartAfterALateSave},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, d) })
	}
}

// Start is the instant every lease's mock clock starts at.
var Start = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// The suite's lease timing: TTL a minute, the default RenewEvery (TTL/3)
// and Margin (TTL/100 + 2ms).
const (
	ttl    = time.Minute
	every  = ttl / 3
	margin = ttl/100 + 2*time.Millisecond
)

// SmallLayout returns a layout with nodeBits node bits, for tests that
// need a small or a particular range of ids.
func SmallLayout(t *testing.T, nodeBits int) ringflake.Layout {
	t.Helper()
	l, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: Start.Add(-time.Hour), Unit: time.Millisecond,
		TimeBits: 41, WorkerBits: nodeBits, SequenceBits: 22 - nodeBits})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Prefix returns a key prefix that no other test or run uses. Its epoch
// does not exist: the first lease acquired under it waits out a quiet
// period (see [Conn.Settle]).
func Prefix(t *testing.T) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "test/" + t.Name() + "/" + hex.EncodeToString(b[:])
}
