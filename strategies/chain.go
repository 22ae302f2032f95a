package strategies

import "strings"

// Chain returns a strategy that asks each of steps in order: a generator
// carries out the first plan that is not [Pass]; when an [Issue] plan finds
// no room, the generator asks the following step. Nested chains are
// flattened. Chain of a single strategy returns that strategy.
//
// For example Chain(Ring(), Wait(5*time.Millisecond), Error()) reuses spare
// sequence numbers, then waits out a short rollback, then fails.
// A chain with no steps, or with a nil step, is rejected by [Validate].
func Chain(steps ...Strategy) Strategy {
	var flat []Strategy
	for _, s := range steps {
		flat = append(flat, Flatten(s)...)
	}
	if len(flat) == 1 && flat[0] != nil {
		return flat[0]
	}
	return chain{steps: flat}
}

type chain struct{ steps []Strategy }

// Decide returns the first plan of its steps that is not Pass. Generators
// do not call it: they expand the chain with Flatten so that a step whose
// Issue plan finds no room hands over to the next step.
// A nil step, which Validate rejects, passes.
func (c chain) Decide(s Situation) Plan {
	for _, step := range c.steps {
		if step == nil {
			continue
		}
		if p := step.Decide(s); !p.IsPass() {
			return p
		}
	}
	return Pass()
}

func (c chain) String() string {
	parts := make([]string, len(c.steps))
	for i, s := range c.steps {
		if s == nil {
			parts[i] = "<nil>"
			continue
		}
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// Unwrap returns the chain's steps.
func (c chain) Unwrap() []Strategy { return append([]Strategy(nil), c.steps...) }

// Flatten returns the steps a generator asks in order: the expanded steps
// of s when it is a chain (any Strategy with an Unwrap() []Strategy method),
// or s alone.
func Flatten(s Strategy) []Strategy {
	u, ok := s.(interface{ Unwrap() []Strategy })
	if !ok {
		return []Strategy{s}
	}
	var flat []Strategy
	for _, step := range u.Unwrap() {
		flat = append(flat, Flatten(step)...)
	}
	return flat
}
