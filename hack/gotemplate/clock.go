package main

// A fixed clock for the differential tests. sprig reads time.Now in `now`, `ago`,
// `durationRound` of a time, and in the date functions when their date argument is not a
// time or a Unix second count. When MESHOP_TEMPLATE_TEST_NOW is set (RFC 3339, e.g.
// 2026-03-08T06:30:15.123456789Z), those functions see that instant instead, and meshop's
// engine reads the same variable (operator/template/funcs_sprig_date.cpp), so both render
// the same text. The overrides call sprig's own functions with the substituted time; only
// the source of "now" changes.

import (
	"os"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
)

// fixedNow is the instant of MESHOP_TEMPLATE_TEST_NOW, or false when unset.
func fixedNow() (time.Time, bool, error) {
	s := os.Getenv("MESHOP_TEMPLATE_TEST_NOW")
	if s == "" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false, err
	}
	return t.In(time.Local), true, nil
}

// clockFuncs returns the overrides for a fixed clock, or nil when the clock is real.
func clockFuncs() template.FuncMap {
	now, ok, err := fixedNow()
	if err != nil {
		panic("MESHOP_TEMPLATE_TEST_NOW: " + err.Error())
	}
	if !ok {
		return nil
	}
	sp := sprig.TxtFuncMap()
	dateInZone := sp["dateInZone"].(func(string, interface{}, string) string)
	// What sprig's dateInZone would have used: the argument when it is a time or a number of
	// seconds, else now.
	orNow := func(d any) any {
		switch d.(type) {
		case time.Time, *time.Time, int64, int, int32:
			return d
		}
		return now
	}
	durationRound := sp["durationRound"].(func(interface{}) string)
	return template.FuncMap{
		"now": func() time.Time { return now },
		"ago": func(d any) string {
			t := now
			switch d := d.(type) {
			case time.Time:
				t = d
			case int64:
				t = time.Unix(d, 0)
			case int:
				t = time.Unix(int64(d), 0)
			}
			return now.Sub(t).Round(time.Second).String()
		},
		"date":         func(f string, d any) string { return dateInZone(f, orNow(d), "Local") },
		"dateInZone":   func(f string, d any, z string) string { return dateInZone(f, orNow(d), z) },
		"date_in_zone": func(f string, d any, z string) string { return dateInZone(f, orNow(d), z) },
		"htmlDate":     func(d any) string { return dateInZone("2006-01-02", orNow(d), "Local") },
		"htmlDateInZone": func(d any, z string) string {
			return dateInZone("2006-01-02", orNow(d), z)
		},
		"durationRound": func(d any) string {
			if t, ok := d.(time.Time); ok {
				return durationRound(int64(now.Sub(t)))
			}
			return durationRound(d)
		},
	}
}
