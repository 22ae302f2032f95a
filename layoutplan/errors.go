package layoutplan

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidDemand is matched by errors about a [Demand] that cannot be
// planned for: no nodes, a rate or lifetime that is not positive, a unit
// that is not a whole number of milliseconds. Details are in a
// [*DemandError].
var ErrInvalidDemand = errors.New("layoutplan: invalid demand")

// DemandError reports which field of a [Demand] is wrong. It matches
// [ErrInvalidDemand].
type DemandError struct {
	Field  string // the Demand field at fault
	Reason string
}

func (e *DemandError) Error() string {
	return fmt.Sprintf("layoutplan: invalid demand: %s: %s", e.Field, e.Reason)
}

// Is reports whether target is [ErrInvalidDemand].
func (e *DemandError) Is(target error) bool { return target == ErrInvalidDemand }

// ErrNoLayoutFits is matched by the error [Fits] returns when no layout of
// 63 bits meets a [Demand]. Details, per unit tried, are in a
// [*NoFitError].
var ErrNoLayoutFits = errors.New("layoutplan: no layout fits")

// NoFitError reports a demand no layout can meet: for each unit tried, the
// bits it would need. It matches [ErrNoLayoutFits].
type NoFitError struct {
	Demand Demand
	Short  []Shortfall
}

func (e *NoFitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s:", ErrNoLayoutFits, e.Demand)
	for i, s := range e.Short {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s", s)
	}
	return b.String()
}

// Is reports whether target is [ErrNoLayoutFits].
func (e *NoFitError) Is(target error) bool { return target == ErrNoLayoutFits }
