//go:build !go1.27

package bench_test

// stdlibPeers is empty before Go 1.27, which brought the standard
// library's uuid package (see stdlib_go127_test.go).
var stdlibPeers []stdlibPeer
