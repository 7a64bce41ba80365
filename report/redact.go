package report

import (
	"reflect"
	"strings"

	"github.com/linkrot/linkrot/urls"
)

// Secrets never printed. The store keeps URL passwords redacted already
// (urls.RedactStrings at every write); the writers check once more, on
// the Dataset they are given, because a Dataset can be built by any caller
// (or from a database written by an older linkrot). When some string of ds
// holds a URL password, each writer works on a deep copy with the
// passwords replaced by "***" (ds itself is never modified); otherwise on
// ds as is, so the usual cost is one read-only pass.

// redactedDataset returns ds, or a redacted deep copy of it when one of
// its strings holds a URL password.
func redactedDataset(ds *Dataset) *Dataset {
	if ds == nil || !holdsSecret(reflect.ValueOf(ds).Elem(), 0) {
		return ds
	}
	c := deepCopy(reflect.ValueOf(ds).Elem(), 0).Interface().(Dataset)
	urls.RedactStrings(&c)
	return &c
}

// holdsSecret reports whether a string reachable from v (exported fields)
// changes under urls.RedactText.
func holdsSecret(v reflect.Value, depth int) bool {
	if depth > 32 {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		return strings.IndexByte(s, '@') >= 0 && urls.RedactText(s) != s
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && holdsSecret(v.Elem(), depth+1)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() && holdsSecret(v.Field(i), depth+1) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if holdsSecret(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if holdsSecret(iter.Value(), depth+1) {
				return true
			}
		}
	}
	return false
}

// deepCopy copies v: pointers, slices and maps are new, structs are copied
// field by field (unexported fields by value).
func deepCopy(v reflect.Value, depth int) reflect.Value {
	if depth > 32 {
		return v
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopy(v.Elem(), depth+1))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem(), depth+1))
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				c.Field(i).Set(deepCopy(v.Field(i), depth+1))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			c.Index(i).Set(deepCopy(v.Index(i), depth+1))
		}
		return c
	case reflect.Array:
		c := reflect.New(v.Type()).Elem()
		for i := 0; i < v.Len(); i++ {
			c.Index(i).Set(deepCopy(v.Index(i), depth+1))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			c.SetMapIndex(iter.Key(), deepCopy(iter.Value(), depth+1))
		}
		return c
	}
	return v
}
