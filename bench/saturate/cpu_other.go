//go:build !unix

package saturate

import (
	"errors"
	"time"
)

// ProcessCPU needs getrusage, which this system does not have.
func ProcessCPU() (time.Duration, error) {
	return 0, errors.New("saturate: CPU time needs getrusage (a unix system)")
}
