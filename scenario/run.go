package scenario

import (
	"context"

	"github.com/ringflake/ringflake/strategies"
)

// TB is the part of testing.TB that [Run] uses; *testing.T and *testing.B
// satisfy it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Run is the helper for Go tests: it reads the scenario file at path,
// replays it against strategy, and fails the test (Errorf, once per
// problem) for every broken promise and every unmet expectation of the
// file. It stops the test (Fatalf) when the file cannot be read or
// replayed. It returns the report, for further assertions; nil after
// Fatalf when t does not stop the goroutine.
//
//	func TestClockSkew(t *testing.T) {
//		for _, f := range []string{"scenarios/leap-second.yaml", "testdata/our-ntp-host.yaml"} {
//			scenario.Run(t, f, strategies.Default())
//		}
//	}
func Run(t TB, path string, strategy strategies.Strategy) *Report {
	t.Helper()
	s, err := ReadFile(path)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	r, err := Replay(context.Background(), s, strategy)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
		return nil
	}
	for _, p := range r.Problems() {
		t.Errorf("%s [%s]: %s", path, r.Strategy, p)
	}
	return r
}
