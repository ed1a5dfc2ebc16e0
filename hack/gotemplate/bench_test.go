package main

// Go side of hack/bench-template.sh: the same render as test/bench/template_bench.cpp.
//   MESHOP_BENCH_TEMPLATE=... MESHOP_BENCH_DATA=... go test -run '^$' -bench . ./

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"text/template"
)

func benchInputs(b *testing.B) (string, any) {
	tp, dp := os.Getenv("MESHOP_BENCH_TEMPLATE"), os.Getenv("MESHOP_BENCH_DATA")
	if tp == "" || dp == "" {
		b.Skip("MESHOP_BENCH_TEMPLATE and MESHOP_BENCH_DATA are not set (run hack/bench-template.sh)")
	}
	text, err := os.ReadFile(tp)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile(dp)
	if err != nil {
		b.Fatal(err)
	}
	var data any
	if err := json.Unmarshal(raw, &data); err != nil {
		b.Fatal(err)
	}
	return string(text), data
}

func BenchmarkRenderSidecar(b *testing.B) {
	text, data := benchInputs(b)
	t, err := template.New("inject").Funcs(FuncMap()).Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if err := t.Execute(&buf, data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "output_bytes")
}

func BenchmarkParseSidecar(b *testing.B) {
	text, _ := benchInputs(b)
	fm := FuncMap()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := template.New("inject").Funcs(fm).Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}
