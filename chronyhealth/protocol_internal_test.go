package chronyhealth

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChronyFloat(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.5, 1.5e-6, -0.3, 0.000007886, 16, 1e-9, -123.456} {
		got := chronyFloat(encodeFloat(f))
		assert.InDelta(t, f, got, math.Abs(f)*1e-7, "%g", f)
	}
	// exponent 2, coefficient 2^23: 2^23 × 2^(2-25) = 1.
	assert.Equal(t, 1.0, chronyFloat(uint32(2)<<25|1<<23))
	assert.Equal(t, 0.0, chronyFloat(0))
}

func FuzzChronyFloat(f *testing.F) {
	f.Add(uint32(0))
	f.Add(uint32(0xffffffff))
	f.Add(uint32(2)<<25 | 1<<23)
	f.Fuzz(func(t *testing.T, x uint32) {
		v := chronyFloat(x)
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
		// Every decoded value survives a round trip exactly: the format
		// holds 25 bits of coefficient, fewer than a float64's 53.
		require.Equal(t, v, chronyFloat(encodeFloat(v)), "%#x", x)
	})
}

// trackingReply builds a reply to the request with sequence seq.
func trackingReply(seq uint32, tr Tracking) []byte {
	b := make([]byte, replyHeader+trackingDataLen)
	b[0], b[1] = protoVersion, pktTypeReply
	be := binary.BigEndian
	be.PutUint16(b[4:], cmdTracking)
	be.PutUint16(b[6:], rpyTracking)
	be.PutUint32(b[16:], seq)
	d := b[replyHeader:]
	be.PutUint32(d[0:], tr.RefID)
	if ip4 := tr.Addr.To4(); ip4 != nil {
		copy(d[4:], ip4)
		be.PutUint16(d[20:], 1)
	}
	be.PutUint16(d[24:], tr.Stratum)
	be.PutUint16(d[26:], tr.LeapStatus)
	sec := tr.RefTime.Unix()
	be.PutUint32(d[28:], uint32(uint64(sec)>>32))
	be.PutUint32(d[32:], uint32(sec))
	be.PutUint32(d[36:], uint32(tr.RefTime.Nanosecond()))
	for i, f := range []float64{tr.CurrentCorrection, tr.LastOffset, tr.RMSOffset, tr.FreqPPM, tr.ResidFreqPPM,
		tr.SkewPPM, tr.RootDelay, tr.RootDispersion, tr.LastUpdateInterval} {
		be.PutUint32(d[40+4*i:], encodeFloat(f))
	}
	return b
}

func TestParseTracking(t *testing.T) {
	want := Tracking{RefID: 0x7f000001, Addr: []byte{127, 0, 0, 1}, Stratum: 9,
		RefTime: time.Unix(1795716979, 353463097), CurrentCorrection: -0.25, RootDelay: 0.5, RootDispersion: 0.125,
		LastUpdateInterval: 2}
	got, err := parseTracking(trackingReply(42, want), 42)
	require.NoError(t, err)
	assert.Equal(t, want.RefID, got.RefID)
	assert.Equal(t, "127.0.0.1", got.Addr.String())
	assert.Equal(t, want.Stratum, got.Stratum)
	assert.True(t, want.RefTime.Equal(got.RefTime))
	assert.Equal(t, -0.25, got.CurrentCorrection)
	assert.Equal(t, 0.5, got.RootDelay)
	assert.Equal(t, 0.125, got.RootDispersion)
	assert.Equal(t, 2.0, got.LastUpdateInterval)

	good := trackingReply(42, want)
	for name, edit := range map[string]func([]byte) []byte{
		"short":          func(b []byte) []byte { return b[:10] },
		"short data":     func(b []byte) []byte { return b[:replyHeader+20] },
		"version 5":      func(b []byte) []byte { b[0] = 5; return b },
		"a request":      func(b []byte) []byte { b[1] = pktTypeRequest; return b },
		"other sequence": func(b []byte) []byte { binary.BigEndian.PutUint32(b[16:], 43); return b },
		"unauthorised":   func(b []byte) []byte { binary.BigEndian.PutUint16(b[8:], 2); return b },
		"other reply":    func(b []byte) []byte { binary.BigEndian.PutUint16(b[6:], 6); return b },
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseTracking(edit(append([]byte(nil), good...)), 42)
			require.ErrorIs(t, err, errProtocol)
		})
	}
}

func TestTrackingRequest(t *testing.T) {
	b := trackingRequest(7)
	assert.Len(t, b, requestSize)
	assert.Equal(t, []byte{protoVersion, pktTypeRequest, 0, 0, 0, cmdTracking, 0, 0, 0, 0, 0, 7}, b[:12])
	assert.GreaterOrEqual(t, len(b), replyHeader+trackingDataLen, "chronyd answers only requests as long as the reply")
}
