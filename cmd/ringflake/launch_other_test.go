//go:build !linux

package main

// launched is the launcher of launch_linux_test.go, which only the Linux
// tests use.
func launched() (code int, ok bool) { return 0, false }
