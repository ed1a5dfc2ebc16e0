package main

// collect turns readable case files into the JSON lines that render reads. A case file:
//
//	# comments before the first case
//	=== name-of-case
//	template lines (joined with "\n"; no newline after the last line)
//	--- data
//	{"json": "data"}              (optional; absent means nil data)
//	--- options
//	missingkey=zero               (optional; one option per line)
//
// A case named ".defaults" is not a case: its data section is the data of every later
// case of the file that has no data section of its own.
//
// Names are prefixed with the file's base name, so "if.cases" case "else" is "if/else".

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func parseCaseFile(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	prefix := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var cases []Case
	var cur *Case
	section := ""
	var lines []string
	lineNo := 0
	flush := func() error {
		if cur == nil {
			return nil
		}
		body := strings.Join(lines, "\n")
		switch section {
		case "template":
			cur.Template = body
		case "data":
			cur.hasData = true
			if strings.TrimSpace(body) != "" {
				if err := json.Unmarshal([]byte(body), &cur.Data); err != nil {
					return fmt.Errorf("%s:%d: case %s: data: %v", path, lineNo, cur.Name, err)
				}
			}
		case "options":
			for _, o := range lines {
				if o = strings.TrimSpace(o); o != "" {
					cur.Options = append(cur.Options, o)
				}
			}
		}
		lines = nil
		return nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		lineNo++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "=== "):
			if err := flush(); err != nil {
				return nil, err
			}
			cases = append(cases, Case{Name: prefix + "/" + strings.TrimSpace(l[4:])})
			cur = &cases[len(cases)-1]
			section = "template"
		case cur != nil && (l == "--- data" || l == "--- options"):
			if err := flush(); err != nil {
				return nil, err
			}
			section = l[4:]
		case cur != nil:
			lines = append(lines, l)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	var defaults any
	for i := range cases {
		if strings.HasSuffix(cases[i].Name, "/.defaults") {
			defaults = cases[i].Data
		} else if !cases[i].hasData {
			cases[i].Data = defaults
		}
	}
	return cases, sc.Err()
}

func runCollect(args []string) error {
	fs := flag.NewFlagSet("collect", flag.ExitOnError)
	out := fs.String("out", "-", "output JSON lines")
	_ = fs.Parse(args)
	w, err := openOut(*out)
	if err != nil {
		return err
	}
	defer w.Close()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	seen := map[string]bool{}
	for _, p := range fs.Args() {
		cases, err := parseCaseFile(p)
		if err != nil {
			return err
		}
		for _, c := range cases {
			if strings.HasSuffix(c.Name, "/.defaults") {
				continue
			}
			if seen[c.Name] {
				return fmt.Errorf("%s: duplicate case name %q", p, c.Name)
			}
			seen[c.Name] = true
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// filecases makes one case per template file, all over the same JSON data file: used to
// render upstream's real templates, which are read from the module cache at test time.
func runFileCases(args []string) error {
	fs := flag.NewFlagSet("filecases", flag.ExitOnError)
	dataPath := fs.String("data", "", "JSON data file")
	prefix := fs.String("prefix", "file/", "case name prefix")
	tname := fs.String("tname", "", "template name (default: t)")
	out := fs.String("out", "-", "output JSON lines")
	_ = fs.Parse(args)
	var data any
	if *dataPath != "" {
		b, err := os.ReadFile(*dataPath)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &data); err != nil {
			return fmt.Errorf("%s: %v", *dataPath, err)
		}
	}
	w, err := openOut(*out)
	if err != nil {
		return err
	}
	defer w.Close()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, p := range fs.Args() {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c := Case{Name: *prefix + filepath.Base(p), Template: string(b), Data: data, TemplateName: *tname}
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return nil
}
