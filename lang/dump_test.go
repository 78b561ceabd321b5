package lang

import (
	"fmt"
	"reflect"
	"strings"
)

// dump renders an AST as an indented tree, one field a line. With
// positions false every Position is left out, so two trees that differ only
// in where they came from dump identically.
func dump(n any, positions bool) string {
	var b strings.Builder
	d := dumper{b: &b, positions: positions}
	d.value("", reflect.ValueOf(n), 0)
	return b.String()
}

type dumper struct {
	b         *strings.Builder
	positions bool
}

var positionType = reflect.TypeOf(Position{})

func (d dumper) line(depth int, format string, args ...any) {
	d.b.WriteString(strings.Repeat("  ", depth))
	fmt.Fprintf(d.b, format, args...)
	d.b.WriteByte('\n')
}

func (d dumper) value(label string, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		d.value(label, v.Elem(), depth)
	case reflect.Slice:
		for i := range v.Len() {
			d.value(fmt.Sprintf("%s[%d]", label, i), v.Index(i), depth)
		}
	case reflect.Struct:
		if v.Type() == positionType {
			if d.positions {
				p := v.Interface().(Position)
				d.line(depth, "%s: %d:%d #%d", label, p.Line, p.Column, p.Offset)
			}
			return
		}
		if v.Type().Name() == "Trivia" {
			if v.IsZero() {
				return
			}
			label = "Trivia"
		}
		d.line(depth, "%s%s", prefix(label), v.Type().Name())
		for i := range v.NumField() {
			d.value(v.Type().Field(i).Name, v.Field(i), depth+1)
		}
	case reflect.Bool:
		if v.Bool() {
			d.line(depth, "%s: true", label)
		}
	default:
		if !v.IsZero() {
			d.line(depth, "%s: %q", label, fmt.Sprint(v.Interface()))
		}
	}
}

func prefix(label string) string {
	if label == "" {
		return ""
	}
	return label + ": "
}
