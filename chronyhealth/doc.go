// Package chronyhealth reads the health of the host's clock from chronyd,
// over chrony's command protocol (the one chronyc speaks) on a UDP command
// port, usually 127.0.0.1:323. It asks only for the tracking report, which
// needs no privilege and changes nothing, and turns it into a
// clockhealth.Reading.
//
// It is a module of its own so that the core module carries no network
// client; its only dependency is the core.
//
// The protocol is spoken by this package rather than through
// github.com/facebook/time/ntp/chrony: the only version of that module the
// Go module proxy serves requires Go 1.26, and ringflake's modules support
// Go 1.24. One request (tracking) and one reply are all this package
// needs; see protocol.go.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package chronyhealth
