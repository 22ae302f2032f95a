//go:build !race

package opaque

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
