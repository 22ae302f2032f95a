//go:build linux

package clockhealth

import "syscall"

// adjtimexRead calls adjtimex(2) with a zeroed struct timex: modes 0, a
// pure read of the kernel's clock state that needs no privilege and
// changes nothing. No other mode is ever passed.
func adjtimexRead() (kernelTimex, error) {
	var tx syscall.Timex // Modes is 0: read only
	state, err := syscall.Adjtimex(&tx)
	if err != nil {
		return kernelTimex{}, err
	}
	return kernelTimex{
		state:    state,
		status:   int32(tx.Status),
		maxError: int64(tx.Maxerror),
		estError: int64(tx.Esterror),
		offset:   int64(tx.Offset),
	}, nil
}
