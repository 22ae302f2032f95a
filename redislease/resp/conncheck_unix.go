//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package resp

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"
)

// alive reports whether the idle connection nc can carry a command: the
// server has not closed it, and (without TLS) sent nothing unasked. It
// peeks at the socket without blocking. With TLS, bytes waiting are taken
// for records the server may send unasked (session tickets).
func alive(nc net.Conn, isTLS bool) bool {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	// A deadline that passed, from the last call, would fail the peek.
	if nc.SetReadDeadline(time.Time{}) != nil {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	live := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			live = isTLS
		case err == nil: // n == 0: the server closed the connection
		default:
			live = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
		}
		return true // never wait for the socket to be readable
	})
	return err == nil && live
}
