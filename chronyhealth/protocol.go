package chronyhealth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"time"
)

// chrony's command protocol (candm.h in chrony's sources), version 6, as
// used by chrony 3.x and 4.x. All fields are big-endian.
//
// A request is a 20-byte header (version, packet type 1, two reserved
// bytes, command u16, attempt u16, sequence u32, two reserved u32)
// followed by the command's data, padded: chronyd answers only requests
// at least as long as their reply, so that it cannot be used to amplify
// traffic.
//
// A reply is a 28-byte header (version, packet type 2, two reserved
// bytes, command u16, reply u16, status u16, three reserved u16,
// sequence u32, two reserved u32) followed by the reply's data.
const (
	protoVersion    = 6
	pktTypeRequest  = 1
	pktTypeReply    = 2
	cmdTracking     = 33
	rpyTracking     = 5
	statusSuccess   = 0
	requestHeader   = 20
	requestSize     = requestHeader + 396
	replyHeader     = 28
	trackingDataLen = 4 + 20 + 2 + 2 + 12 + 9*4
)

// Leap status values of the tracking report.
const (
	leapNormal = 0
	leapInsert = 1
	leapDelete = 2
	leapUnsync = 3
)

// errProtocol is matched by the errors of a reply that is not a valid
// tracking reply.
var errProtocol = errors.New("ringflake: unexpected reply from chronyd")

// Tracking is chronyd's tracking report, as `chronyc tracking` prints it.
type Tracking struct {
	// RefID is the reference id of the source chronyd follows (0 when
	// none); Addr its address, when it is an NTP server.
	RefID uint32
	Addr  net.IP
	// Stratum is chronyd's own stratum.
	Stratum uint16
	// LeapStatus is 0 normal, 1 insert second, 2 delete second,
	// 3 not synchronised.
	LeapStatus uint16
	// RefTime is when chronyd last updated its estimate of the clock.
	RefTime time.Time
	// CurrentCorrection is the offset chronyd is correcting, in seconds:
	// positive when the system clock is slow of NTP time (it will be
	// moved forward), negative when it is fast ("System time: 0.3 seconds
	// fast of NTP time" is -0.3).
	CurrentCorrection float64
	// LastOffset and RMSOffset are the last measured offset and its
	// long-term average, in seconds.
	LastOffset, RMSOffset float64
	// FreqPPM, ResidFreqPPM and SkewPPM describe the clock's rate error.
	FreqPPM, ResidFreqPPM, SkewPPM float64
	// RootDelay and RootDispersion, in seconds, are the delay to the
	// primary reference and the dispersion accumulated on the way and
	// since the last update.
	RootDelay, RootDispersion float64
	// LastUpdateInterval is the time between chronyd's last two clock
	// updates, in seconds.
	LastUpdateInterval float64
}

// trackingRequest returns a tracking request with sequence seq.
func trackingRequest(seq uint32) []byte {
	b := make([]byte, requestSize)
	b[0] = protoVersion
	b[1] = pktTypeRequest
	binary.BigEndian.PutUint16(b[4:], cmdTracking)
	binary.BigEndian.PutUint32(b[8:], seq)
	return b
}

// parseTracking parses a tracking reply to the request with sequence
// seq; its errors match errProtocol, or say what status chronyd answered.
func parseTracking(b []byte, seq uint32) (Tracking, error) {
	var t Tracking
	if len(b) < replyHeader {
		return t, fmt.Errorf("%w: %d bytes", errProtocol, len(b))
	}
	if b[0] != protoVersion || b[1] != pktTypeReply {
		return t, fmt.Errorf("%w: protocol version %d, packet type %d", errProtocol, b[0], b[1])
	}
	cmd := binary.BigEndian.Uint16(b[4:])
	reply := binary.BigEndian.Uint16(b[6:])
	status := binary.BigEndian.Uint16(b[8:])
	if got := binary.BigEndian.Uint32(b[16:]); got != seq {
		return t, fmt.Errorf("%w: sequence %d, want %d", errProtocol, got, seq)
	}
	if status != statusSuccess {
		return t, fmt.Errorf("%w: status %d (%s)", errProtocol, status, statusText(status))
	}
	if cmd != cmdTracking || reply != rpyTracking {
		return t, fmt.Errorf("%w: command %d reply %d, want %d and %d", errProtocol, cmd, reply, cmdTracking, rpyTracking)
	}
	d := b[replyHeader:]
	if len(d) < trackingDataLen {
		return t, fmt.Errorf("%w: tracking data of %d bytes, want %d", errProtocol, len(d), trackingDataLen)
	}
	be := binary.BigEndian
	t.RefID = be.Uint32(d[0:])
	t.Addr = ipAddr(d[4:24])
	t.Stratum = be.Uint16(d[24:])
	t.LeapStatus = be.Uint16(d[26:])
	t.RefTime = timespec(d[28:40])
	f := func(i int) float64 { return chronyFloat(be.Uint32(d[40+4*i:])) }
	t.CurrentCorrection, t.LastOffset, t.RMSOffset = f(0), f(1), f(2)
	t.FreqPPM, t.ResidFreqPPM, t.SkewPPM = f(3), f(4), f(5)
	t.RootDelay, t.RootDispersion, t.LastUpdateInterval = f(6), f(7), f(8)
	return t, nil
}

// statusText names chronyd's reply statuses that a tracking request can
// meet.
func statusText(s uint16) string {
	switch s {
	case 1:
		return "failed"
	case 2:
		return "unauthorised"
	case 3:
		return "invalid"
	case 6:
		return "not enabled"
	case 18:
		return "bad packet version"
	case 19:
		return "bad packet length"
	default:
		return "unknown"
	}
}

// ipAddr decodes chrony's IPAddr: 16 address bytes, family u16 (1 IPv4,
// 2 IPv6), padding u16.
func ipAddr(b []byte) net.IP {
	switch binary.BigEndian.Uint16(b[16:]) {
	case 1:
		return net.IP(append([]byte(nil), b[:4]...)).To16()
	case 2:
		return net.IP(append([]byte(nil), b[:16]...))
	}
	return nil
}

// timespec decodes chrony's Timespec: seconds high u32, seconds low u32,
// nanoseconds u32. A high word of 0x7fffffff means none.
func timespec(b []byte) time.Time {
	hi := uint64(binary.BigEndian.Uint32(b[0:]))
	if hi == 0x7fffffff {
		hi = 0
	}
	lo := uint64(binary.BigEndian.Uint32(b[4:]))
	return time.Unix(int64(hi<<32|lo), int64(binary.BigEndian.Uint32(b[8:])))
}

// chronyFloat decodes chrony's 32-bit float: a signed 7-bit exponent and
// a signed 25-bit coefficient, worth coefficient × 2^(exponent-25).
func chronyFloat(x uint32) float64 {
	exp := int32(x >> 25)
	if exp >= 1<<6 {
		exp -= 1 << 7
	}
	coef := int32(x & (1<<25 - 1))
	if coef >= 1<<24 {
		coef -= 1 << 25
	}
	return math.Ldexp(float64(coef), int(exp)-25)
}

// encodeFloat is chronyFloat's inverse, to within the format's precision;
// tests use it to build replies.
func encodeFloat(f float64) uint32 {
	if f == 0 {
		return 0
	}
	frac, exp := math.Frexp(f) // f = frac × 2^exp, 0.5 <= |frac| < 1
	// coefficient = frac × 2^24 fits in 25 signed bits; value = coef × 2^(e-25)
	coef := int32(math.Round(frac * (1 << 24)))
	e := exp + 1
	if coef == 1<<24 { // rounding carried
		coef >>= 1
		e++
	}
	switch {
	case e > 63:
		e, coef = 63, 1<<24-1
	case e < -64:
		return 0
	}
	return uint32(e&0x7f)<<25 | uint32(coef)&(1<<25-1)
}
