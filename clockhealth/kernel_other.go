//go:build !linux

package clockhealth

// adjtimexRead reports ErrUnsupported: only Linux's adjtimex is read.
func adjtimexRead() (kernelTimex, error) { return kernelTimex{}, ErrUnsupported }
