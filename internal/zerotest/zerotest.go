// Package zerotest calls functions and methods with zero values, for the
// tests that hold every package to "zero and nil arguments give zero
// values or errors, never a panic".
package zerotest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

var contextType = reflect.TypeFor[context.Context]()

// Call calls f, a function, with the zero value of each parameter (an
// empty variadic list; context.Background() for a context, since a nil
// context is a caller's bug the standard library panics on too) and
// reports a panic as an error of t.
func Call(t *testing.T, name string, f any) {
	t.Helper()
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Func {
		t.Fatalf("zerotest.Call(%s): %T is not a function", name, f)
	}
	call(t, name, v)
}

// Methods calls every exported method of each value (its method set: pass
// a pointer for the pointer receivers as well) with zero arguments, as
// Call does, except the methods named in skip ("Type.Method").
func Methods(t *testing.T, skip []string, values ...any) {
	t.Helper()
	skipped := make(map[string]bool, len(skip))
	for _, s := range skip {
		skipped[s] = true
	}
	for _, x := range values {
		v := reflect.ValueOf(x)
		typ := v.Type()
		tname := typ.String()
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			name := tname + "." + m.Name
			if skipped[name] {
				continue
			}
			call(t, name, v.Method(i))
		}
	}
}

func call(t *testing.T, name string, f reflect.Value) {
	t.Helper()
	ft := f.Type()
	n := ft.NumIn()
	if ft.IsVariadic() {
		n--
	}
	args := make([]reflect.Value, n)
	for i := range n {
		if in := ft.In(i); in == contextType {
			args[i] = reflect.ValueOf(context.Background())
		} else {
			args[i] = reflect.Zero(in)
		}
	}
	if msg := try(f, args); msg != "" {
		t.Errorf("%s with zero arguments panics: %s", name, msg)
	}
}

func try(f reflect.Value, args []reflect.Value) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f.Call(args)
	return ""
}
