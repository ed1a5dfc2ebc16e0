// The template language, builtins only. Every expectation here was checked against Go
// 1.26's text/template on the same template and data (see go_corpus_test.cpp for the bulk
// comparison); error texts are Go's, byte for byte.
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/template/test_util.hpp"

namespace meshop::template_engine::testing {
namespace {

TEST(TemplatePrint, ValuesPrintAsGoFmtSprint) {
  EXPECT_EQ(run("{{.m}} {{.l}} {{.missing}} {{.a}} {{.f}} {{.fl}} {{.t}}"),
            "OK map[j:v k:1] [1 x <nil>] <no value> <no value> 3 1.5 true");
}

TEST(TemplatePrint, FloatsFromDataUseShortestGFormat) {
  EXPECT_EQ(render("{{.a}} {{.b}} {{.c}} {{.d}} {{.e}}",
                   R"({"a": 15020, "b": 1000000, "c": 1e21, "d": 0.000001, "e": 123456})"),
            "OK 15020 1e+06 1e+21 1e-06 123456");
}

TEST(TemplatePrint, MissingMapKeyPrintsNoValue) {
  EXPECT_EQ(run("{{index .m \"missing\"}}|{{.m.missing}}|{{.m.missing.deeper}}"),
            "OK <no value>|<no value>|<no value>");
}

TEST(TemplateText, TrimMarkersRemoveSurroundingSpace) {
  EXPECT_EQ(run("a  {{- \"x\" -}}  b"), "OK axb");
  EXPECT_EQ(run("a\t\n {{- 1}}"), "OK a1");
  EXPECT_EQ(run("{{1 -}}\n\n b"), "OK 1b");
  // "-3" without a space is a negative number, not a trim marker.
  EXPECT_EQ(run("a {{-3}} b"), "OK a -3 b");
}

TEST(TemplateText, CommentsProduceNothingAndMayTrim) {
  EXPECT_EQ(run("{{/* comment */}}ok"), "OK ok");
  EXPECT_EQ(run("a {{- /* c */ -}} b"), "OK ab");
  EXPECT_EQ(run("{{/* c */ x}}"), "ERR template: t:1: comment ends before closing delimiter");
  EXPECT_EQ(run("{{/* unclosed"), "ERR template: t:1: unclosed comment");
}

TEST(TemplateLiterals, NumbersCharsAndStrings) {
  EXPECT_EQ(run("{{'a'}} {{0x10}} {{1e3}} {{1_000}} {{0b11}} {{0o17}} {{017}} {{`r\\n`}}"),
            "OK 97 16 1000 1000 3 15 15 r\\n");
  EXPECT_EQ(run("{{\"a\\tb\\u00e9\\x41\"}}"), "OK a\tbéA");
  EXPECT_EQ(run("{{1.5}} {{.5}} {{-5}} {{+5}} {{3.0}}"), "OK 1.5 0.5 -5 5 3");
}

TEST(TemplateLiterals, MalformedLiteralsAreParseErrors) {
  EXPECT_EQ(run("{{99999999999999999999}}"),
            "ERR template: t:1: integer overflow: \"99999999999999999999\"");
  EXPECT_EQ(run("{{'ab'}}"), "ERR template: t:1: malformed character constant: 'ab'");
  EXPECT_EQ(run("{{\"unterminated}}"), "ERR template: t:1: unterminated quoted string");
  EXPECT_EQ(run("{{`unterm}}"), "ERR template: t:1: unterminated raw quoted string");
  EXPECT_EQ(run("{{\"bad\\q\"}}"), "ERR template: t:1: invalid syntax");
  EXPECT_EQ(run("{{1e}}"), "ERR template: t:1: illegal number syntax: \"1e\"");
  EXPECT_EQ(run("{{3.x}}"), "ERR template: t:1: bad number syntax: \"3.x\"");
}

TEST(TemplateLiterals, ComplexConstantsParsePrintAndCompareAsInGo) {
  // Go's text/template reads "bi" with ParseFloat and "a+bi" with fmt.Sscan; the Go
  // differential (test/differential/cases/complex.cases) covers the rest.
  EXPECT_EQ(run("{{1i}} {{1.5-2i}} {{0i}} {{1+0x1p4i}} {{printf \"%T %8.2f\" 1i 1+2i}}"),
            "OK (0+1i) (1.5-2i) (0+0i) (1+16i) complex128 (    1.00   +2.00i)");
  EXPECT_EQ(run("{{if 0i}}t{{else}}f{{end}} {{eq 1+2i 1+2i}} {{not 0+0i}}"), "OK f true true");
  EXPECT_EQ(run("{{lt 1i 2i}}"),
            "ERR template: t:1:2: executing \"t\" at <lt 1i 2i>: error calling lt: invalid type "
            "for comparison");
  EXPECT_EQ(run("{{1+i}}"), "ERR template: t:1: syntax error scanning complex number");
  EXPECT_EQ(run("{{1e400+1i}}"),
            "ERR template: t:1: strconv.ParseFloat: parsing \"1e400\": value out of range");
}

TEST(TemplateIf, ElseIfChainsAndTruthiness) {
  EXPECT_EQ(run("{{if .t}}T{{else}}F{{end}}"), "OK T");
  EXPECT_EQ(run("{{if .F}}T{{else if .t}}E{{else}}F{{end}}"), "OK E");
  EXPECT_EQ(run("{{if .missing}}x{{else}}n{{end}}{{if .a}}x{{else}}n{{end}}"), "OK nn");
  EXPECT_EQ(run("{{if .el}}x{{else}}e{{end}}{{if .em}}x{{else}}e{{end}}{{if .e}}x{{else}}e{{end}}"),
            "OK eee");
  EXPECT_EQ(run("{{if 0}}x{{else}}z{{end}}{{if 0.0}}x{{else}}z{{end}}{{if .m}}m{{end}}"), "OK zzm");
}

TEST(TemplateWith, SetsDotAndSupportsElseWith) {
  EXPECT_EQ(run("{{with .m}}{{.j}}{{else}}no{{end}}"), "OK v");
  EXPECT_EQ(run("{{with .missing}}x{{else}}none {{.s}}{{end}}"), "OK none str");
  EXPECT_EQ(run("{{with .F}}x{{else with .m}}{{.j}}{{end}}"), "OK v");
  EXPECT_EQ(run("{{with $x := .m}}{{$x.k}}{{end}}"), "OK 1");
}

TEST(TemplateRange, ListsMapsInKeyOrderAndInts) {
  EXPECT_EQ(run("{{range .l}}<{{.}}>{{end}}"), "OK <1><x><<no value>>");
  EXPECT_EQ(run("{{range $i, $v := .l}}{{$i}}:{{$v}} {{end}}"), "OK 0:1 1:x 2:<no value> ");
  EXPECT_EQ(render("{{range $k, $v := .}}{{$k}}={{$v}};{{end}}", R"({"b": 2, "a": 1, "c": 3})"),
            "OK a=1;b=2;c=3;");
  EXPECT_EQ(run("{{range 3}}{{.}}{{end}}"), "OK 012");
  EXPECT_EQ(run("{{range $i := 3}}{{$i}}{{end}}"), "OK 012");
}

TEST(TemplateRange, ElseRunsForEmptyNilAndZero) {
  EXPECT_EQ(run("{{range .el}}x{{else}}empty{{end}}"), "OK empty");
  EXPECT_EQ(run("{{range .missing}}x{{else}}none{{end}}"), "OK none");
  EXPECT_EQ(run("{{range .a}}x{{else}}nil{{end}}"), "OK nil");
  EXPECT_EQ(run("{{range 0}}x{{else}}zero{{end}}"), "OK zero");
}

TEST(TemplateRange, BreakAndContinue) {
  EXPECT_EQ(run("{{range .l}}{{if not .}}{{break}}{{end}}{{.}},{{end}}"), "OK 1,x,");
  EXPECT_EQ(run("{{range .l}}{{if eq (print .) \"x\"}}{{continue}}{{end}}{{.}}{{end}}"),
            "OK 1<no value>");
  EXPECT_EQ(run("{{break}}"), "ERR template: t:1: {{break}} outside {{range}}");
  EXPECT_EQ(run("{{range .l}}{{end}}{{continue}}"),
            "ERR template: t:1: {{continue}} outside {{range}}");
}

TEST(TemplateRange, NonIterableValuesAreErrors) {
  EXPECT_EQ(run("{{range .f}}{{end}}"),
            "ERR template: t:1:8: executing \"t\" at <.f>: range can't iterate over 3");
  EXPECT_EQ(run("{{range $i, $v := 2}}{{end}}"),
            "ERR template: t:1:18: executing \"t\" at <2>: can't use 2 to iterate over more than "
            "one variable");
}

TEST(TemplateVariables, DeclarationAssignmentAndScope) {
  EXPECT_EQ(run("{{$x := 1}}{{if true}}{{$x = 2}}{{$y := 3}}{{end}}{{$x}}"), "OK 2");
  EXPECT_EQ(run("{{$x := 1}}{{if true}}{{$x := 2}}{{end}}{{$x}}"), "OK 1");
  EXPECT_EQ(run("{{with .m}}{{$.s}}{{.k}}{{end}}"), "OK str1");
  EXPECT_EQ(run("{{$x := \"a\"}}{{range .l}}{{$x = print $x .}}{{end}}{{$x}}"), "OK a1x<nil>");
  EXPECT_EQ(run("{{if true}}{{$x := 2}}{{end}}{{$x}}"),
            "ERR template: t:1: undefined variable \"$x\"");
  EXPECT_EQ(run("{{$z}}"), "ERR template: t:1: undefined variable \"$z\"");
}

TEST(TemplateVariables, TemplateCallsDoNotInheritVariables) {
  EXPECT_EQ(run("{{$y := 1}}{{define \"x\"}}{{$y}}{{end}}"),
            "ERR template: t:1: undefined variable \"$y\"");
  EXPECT_EQ(run("{{define \"x\"}}{{$}}{{end}}{{template \"x\" .s}}"), "OK str");
}

TEST(TemplateDefine, TemplateBlockAndErrors) {
  EXPECT_EQ(
      run("{{define \"d\"}}[{{.}}]{{end}}{{template \"d\" .s}}{{block \"b\" .f}}<{{.}}>{{end}}"),
      "OK [str]<3>");
  EXPECT_EQ(run("{{template \"nope\"}}"),
            "ERR template: t:1:11: executing \"t\" at <{{template \"nope\"}}>: template \"nope\" "
            "not defined");
  EXPECT_EQ(run("{{define \"x\"}}a{{end}}{{define \"x\"}}b{{end}}"),
            "ERR template: t:1: template: multiple definition of template \"x\"");
}

TEST(TemplateDefine, ErrorsInDefinedTemplatesNameThemAndTheirPosition) {
  EXPECT_EQ(
      run("{{define \"a\"}}\n{{.a.b}}\n{{end}}\n{{template \"a\" .}}"),
      "ERR template: t:2:4: executing \"a\" at <.a.b>: nil pointer evaluating interface {}.b");
}

TEST(TemplateDefine, RecursionStopsAtDepthLimit) {
  // Go's limit is 100000; ours is 1000 to keep the C++ stack bounded.
  EXPECT_EQ(run("{{define \"r\"}}{{template \"r\" .}}{{end}}{{template \"r\" 1}}"),
            "ERR template: t:1:25: executing \"r\" at <{{template \"r\" .}}>: exceeded maximum "
            "template depth (1000)");
}

TEST(TemplatePipelines, FinalValueIsLastArgument) {
  EXPECT_EQ(run("{{.s | printf \"%q\" | printf \"%s!\"}}"), "OK \"str\"!");
  EXPECT_EQ(run("{{\"a\" | printf \"%s %s\" \"b\"}}"), "OK b a");
  EXPECT_EQ(run("{{(.m).k}} {{(index .l 1)}} {{len (print 1 2)}}"), "OK 1 x 3");
  EXPECT_EQ(run("{{print 1 | 2}}"),
            "ERR template: t:1: non executable command in pipeline stage 2");
}

TEST(TemplateFields, ErrorsUseGoStaticTypes) {
  EXPECT_EQ(
      run("{{.a.b}}"),
      "ERR template: t:1:4: executing \"t\" at <.a.b>: nil pointer evaluating interface {}.b");
  EXPECT_EQ(run("{{.s.x}}"),
            "ERR template: t:1:4: executing \"t\" at <.s.x>: can't evaluate field x in type "
            "interface {}");
  EXPECT_EQ(
      run("{{$x := .s}}{{$x.x}}"),
      "ERR template: t:1:16: executing \"t\" at <$x.x>: can't evaluate field x in type string");
  EXPECT_EQ(run("{{.s 1}}"),
            "ERR template: t:1:2: executing \"t\" at <.s>: s is not a method but has arguments");
  EXPECT_EQ(run("{{nil}}"), "ERR template: t:1:2: executing \"t\" at <nil>: nil is not a command");
}

TEST(TemplateErrors, PositionsCountLinesAndBytes) {
  EXPECT_EQ(
      run("line1\n  {{.a.b}}"),
      "ERR template: t:2:6: executing \"t\" at <.a.b>: nil pointer evaluating interface {}.b");
  EXPECT_EQ(
      run("{{if 1}}\n{{.a.b}}{{end}}"),
      "ERR template: t:2:4: executing \"t\" at <.a.b>: nil pointer evaluating interface {}.b");
  EXPECT_EQ(render_with(no_functions(), "{{.a.b}}", json_data(kData), "inject"),
            "ERR template: inject:1:4: executing \"inject\" at <.a.b>: nil pointer evaluating "
            "interface {}.b");
}

TEST(TemplateErrors, ParseErrorsAreGoMessages) {
  EXPECT_EQ(run("{{if}}"), "ERR template: t:1: missing value for if");
  EXPECT_EQ(run("{{foo}}"), "ERR template: t:1: function \"foo\" not defined");
  EXPECT_EQ(run("{{.s.}}"), "ERR template: t:1: unexpected <.> in operand");
  EXPECT_EQ(run("{{if 1}}{{else}}{{else}}{{end}}"),
            "ERR template: t:1: expected end; found {{else}}");
  EXPECT_EQ(run("{{print (1}}"), "ERR template: t:1: unclosed left paren");
  EXPECT_EQ(run("{{if 1}}"), "ERR template: t:1: unexpected EOF");
  EXPECT_EQ(run("{{if .t}}\n\n{{end"), "ERR template: t:3: unclosed action");
}

TEST(TemplateErrors, FailedExecutionProducesNoOutput) {
  auto t = Template::parse("t", "before {{.a.b}} after", no_functions());
  ASSERT_TRUE(t.ok());
  std::string out = "kept:";
  auto st = (*t)->execute_into(out, json_data(kData));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(out, "kept:");
}

TEST(TemplateBuiltins, AndOrReturnOperandsAndShortCircuit) {
  EXPECT_EQ(run("{{and 1 0 2}}|{{or 0 \"\" 3}}|{{and .t .e}}|{{and 1 2}}|{{or 0 \"\"}}"),
            "OK 0|3||2|");
  // The second operand would fail; it is never evaluated.
  EXPECT_EQ(run("{{and .F (index .l 99)}}|{{or .t (index .l 99)}}"), "OK false|true");
  EXPECT_EQ(run("{{not 0}} {{not .s}} {{not .missing}}"), "OK true false true");
}

TEST(TemplateBuiltins, ComparisonsFollowGoTypeRules) {
  EXPECT_EQ(run("{{lt 1 2}} {{le 2 2}} {{gt 1 2}} {{ge 2 3}} {{ne 1 2}} {{eq 1 2 3 1}}"),
            "OK true true false false true true");
  EXPECT_EQ(run("{{eq .f 3.0}} {{eq .s \"str\"}} {{eq 'a' 97}} {{lt \"a\" \"b\"}}"),
            "OK true true true true");
  EXPECT_EQ(run("{{eq .missing .a}} {{eq .missing 1}} {{ne .a nil}}"), "OK true false false");
  EXPECT_EQ(run("{{eq .f 3}}"),
            "ERR template: t:1:2: executing \"t\" at <eq .f 3>: error calling eq: incompatible "
            "types for comparison: float64 and int");
  EXPECT_EQ(run("{{lt .missing 1}}"),
            "ERR template: t:1:2: executing \"t\" at <lt .missing 1>: error calling lt: invalid "
            "type for comparison");
  EXPECT_EQ(run("{{eq .m .m}}"),
            "ERR template: t:1:2: executing \"t\" at <eq .m .m>: error calling eq: non-comparable "
            "type map[j:v k:%!s(float64=1)]: map[string]interface {}");
  EXPECT_EQ(run("{{eq 1}}"),
            "ERR template: t:1:2: executing \"t\" at <eq 1>: error calling eq: missing argument "
            "for comparison");
}

TEST(TemplateBuiltins, LenIndexSlice) {
  EXPECT_EQ(run("{{len .s}} {{len .l}} {{len .m}} {{len \"héllo\"}}"), "OK 3 3 2 6");
  EXPECT_EQ(run("{{index .l 1}} {{index .m \"j\"}} {{index .s 1}} {{index .l}}"),
            "OK x v 116 [1 x <nil>]");
  EXPECT_EQ(render("{{index . 1 1 0}}", "[[1,2],[3,[4,5]]]"), "OK 4");
  EXPECT_EQ(run("{{slice .s 1 2}} {{slice .l 1}} {{slice .s}}"), "OK t [x <nil>] str");
  EXPECT_EQ(run("{{index .l 3}}"),
            "ERR template: t:1:2: executing \"t\" at <index .l 3>: error calling index: reflect: "
            "slice index out of range");
  EXPECT_EQ(run("{{index .l 5}}"),
            "ERR template: t:1:2: executing \"t\" at <index .l 5>: error calling index: index out "
            "of range: 5");
  EXPECT_EQ(run("{{index .m 1}}"),
            "ERR template: t:1:2: executing \"t\" at <index .m 1>: error calling index: value has "
            "type int; should be string");
  EXPECT_EQ(run("{{len .a}}"),
            "ERR template: t:1:2: executing \"t\" at <len .a>: error calling len: len of nil "
            "pointer");
  EXPECT_EQ(run("{{slice .s 2 1}}"),
            "ERR template: t:1:2: executing \"t\" at <slice .s 2 1>: error calling slice: invalid "
            "slice index: 2 > 1");
}

TEST(TemplateBuiltins, PrintFamilyAndEscapers) {
  EXPECT_EQ(run("{{print 1 2 \"a\" \"b\" 3}}"), "OK 1 2ab3");
  EXPECT_EQ(run("{{println 1 \"a\"}}"), "OK 1 a\n");
  EXPECT_EQ(run("{{print .a .missing}}"), "OK <nil> <nil>");
  EXPECT_EQ(run("{{html \"<a&b>\"}}|{{js \"it's <x>\"}}|{{urlquery \"a b&c\"}}"),
            "OK &lt;a&amp;b&gt;|it\\'s \\u003Cx\\u003E|a+b%26c");
  EXPECT_EQ(run("{{html .missing}}"), "OK &lt;no value&gt;");
}

TEST(TemplateBuiltins, CallReportsNonFunctions) {
  EXPECT_EQ(run("{{call .s}}"),
            "ERR template: t:1:2: executing \"t\" at <call .s>: error calling call: non-function "
            ".s of type string");
  EXPECT_EQ(run("{{call .missing}}"),
            "ERR template: t:1:2: executing \"t\" at <call .missing>: error calling call: call of "
            "nil");
}

TEST(TemplateBuiltins, WrongArgumentCounts) {
  EXPECT_EQ(run("{{not 1 2}}"),
            "ERR template: t:1:2: executing \"t\" at <not>: wrong number of args for not: want 1 "
            "got 2");
  EXPECT_EQ(run("{{and}}"),
            "ERR template: t:1:2: executing \"t\" at <and>: wrong number of args for and: want at "
            "least 1 got 0");
}

TEST(TemplatePrintf, VerbsFlagsAndErrors) {
  EXPECT_EQ(run("{{printf \"%d %s %v %q %t %x %X %o %c %U %%\" 42 \"s\" 1.5 \"q\" true 255 255 8 "
                "65 65}}"),
            "OK 42 s 1.5 \"q\" true ff FF 10 A U+0041 %");
  EXPECT_EQ(run("{{printf \"%5d|%-5d|%05d|%+d|%.3d|%#x\" 42 42 42 42 42 255}}"),
            "OK    42|42   |00042|+42|042|0xff");
  EXPECT_EQ(run("{{printf \"%.2f|%8.3f|%e|%g|%.3g\" 3.14159 3.14159 314.159 1e-7 1234567.0}}"),
            "OK 3.14|   3.142|3.141590e+02|1e-07|1.23e+06");
  EXPECT_EQ(run("{{printf \"%d\" \"x\"}}|{{printf \"%s %s\" \"a\"}}|{{printf \"%s\" \"a\" 1}}|"
                "{{printf \"%!\"}}|{{printf \"%\"}}"),
            "OK %!d(string=x)|a %!s(MISSING)|a%!(EXTRA int=1)|%!!(MISSING)|%!(NOVERB)");
  EXPECT_EQ(run("{{printf \"%s\" .f}}"), "OK %!s(float64=3)");
  EXPECT_EQ(run("{{printf \"%T %T %T %T\" .s .f .l .m}}"),
            "OK string float64 []interface {} map[string]interface {}");
  EXPECT_EQ(run("{{printf \"%v %d\" .l .l}}"),
            "OK [1 x <nil>] [%!d(float64=1) %!d(string=x) <nil>]");
  EXPECT_EQ(run("{{printf \"%#v\" .m}}"), "OK map[string]interface {}{\"j\":\"v\", \"k\":1}");
}

TEST(TemplateFunctions, ArgumentsAreConvertedToParameterTypes) {
  FunctionMap fm;
  fm.add("repeat", {{ParamType::int_(), ParamType::string()}}, [](Args a) -> Result<Value> {
    std::string s;
    for (std::int64_t i = 0; i < a[0].as_int(); ++i)
      s += a[1].as_string();
    return Value::string(std::move(s));
  });
  fm.add("kind", {{ParamType::any()}},
         [](Args a) -> Result<Value> { return Value::string(go_type_name(a[0])); });
  fm.add("boom", {{}, ParamType::any()}, [](Args) -> Result<Value> { return fail("it broke"); });
  auto data = json_data(kData);
  EXPECT_EQ(render_with(fm, "{{repeat 3 \"ab\"}}|{{\"x\" | repeat 2}}", data), "OK ababab|xx");
  EXPECT_EQ(render_with(fm, "{{kind 1}} {{kind 1.0}} {{kind .missing}} {{kind .l}}", data),
            "OK int float64 <nil> []interface {}");
  EXPECT_EQ(render_with(fm, "{{repeat .f \"a\"}}", data),
            "ERR template: t:1:9: executing \"t\" at <.f>: wrong type for value; expected int; got "
            "float64");
  EXPECT_EQ(render_with(fm, "{{repeat 1 .missing}}", data),
            "ERR template: t:1:11: executing \"t\" at <.missing>: invalid value; expected string");
  EXPECT_EQ(render_with(fm, "{{repeat \"a\" \"b\"}}", data),
            "ERR template: t:1:9: executing \"t\" at <\"a\">: expected integer; found \"a\"");
  EXPECT_EQ(render_with(fm, "{{repeat 1}}", data),
            "ERR template: t:1:2: executing \"t\" at <repeat>: wrong number of args for repeat: "
            "want 2 got 1");
  EXPECT_EQ(render_with(fm, "{{boom 1 2}}", data),
            "ERR template: t:1:2: executing \"t\" at <boom 1 2>: error calling boom: it broke");
}

TEST(TemplateFunctions, UserFunctionsOverrideBuiltins) {
  FunctionMap fm;
  fm.add("len", {{ParamType::any()}}, [](Args) -> Result<Value> { return Value::integer(42); });
  EXPECT_EQ(render_with(fm, "{{len \"abc\"}}", Value()), "OK 42");
}

TEST(TemplateLimits, StepAndOutputLimitsStopRunawayTemplates) {
  auto t = Template::parse("t", "{{range 1000000000}}x{{end}}", no_functions());
  ASSERT_TRUE(t.ok());
  ExecOptions steps;
  steps.max_steps = 1000;
  auto r = (*t)->execute(Value(), steps);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("exceeded the limit of 1000 steps"), std::string::npos) << r.message();
  ExecOptions bytes;
  bytes.max_output_bytes = 100;
  r = (*t)->execute(Value(), bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("output exceeded the limit of 100 bytes"), std::string::npos);
}

TEST(TemplateLimits, TimeLimitStopsATemplateWhoseStepsAreSlow) {
  // Few steps, each slow: only the time bound can stop this one.
  FunctionMap fm;
  fm.add("nap", {}, [](Args) -> Result<Value> {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Value::integer(0);
  });
  auto t = Template::parse("t", "{{range 1000000}}{{nap}}{{end}}", fm);
  ASSERT_TRUE(t.ok()) << t.message();
  ExecOptions timed;
  timed.max_duration = std::chrono::milliseconds(20);
  auto r = (*t)->execute(Value(), timed);
  ASSERT_FALSE(r.ok());
  // Named at the node reached when the clock was read: the action or its command.
  EXPECT_THAT(r.message(), ::testing::StartsWith("template: t:1:1"));
  EXPECT_THAT(r.message(), ::testing::HasSubstr("executing \"t\" at <"));
  EXPECT_THAT(r.message(), ::testing::EndsWith(": execution exceeded the time limit of 20ms"));
  // The bounds the injection engine uses are all set.
  constexpr ExecOptions untrusted = ExecOptions::untrusted();
  EXPECT_GT(untrusted.max_steps, 0u);
  EXPECT_GT(untrusted.max_output_bytes, 0u);
  EXPECT_GT(untrusted.max_duration.count(), 0);
}

TEST(TemplateLimits, DeepNestingIsAnErrorNotACrash) {
  std::string deep;
  for (int i = 0; i < 1001; ++i)
    deep += "{{if 1}}";
  EXPECT_EQ(run(deep), "ERR template: t:1: max control nesting depth exceeded");
  std::string parens = "{{" + std::string(1001, '(') + "1" + std::string(1001, ')') + "}}";
  EXPECT_EQ(run(parens), "ERR template: t:1: max expression depth exceeded");
  std::string ifs;
  for (int i = 0; i < 9; ++i)
    ifs += "{{if .}}";
  ifs += "{{template \"a\" .}}";
  for (int i = 0; i < 9; ++i)
    ifs += "{{end}}";
  auto r = run("{{define \"a\"}}" + ifs + "{{end}}{{template \"a\" 1}}");
  EXPECT_NE(r.find("exceeded maximum nesting depth (1000)"), std::string::npos) << r;
}

TEST(TemplateSet, NamesAndExecuteTemplate) {
  auto t = Template::parse("main", "{{define \"a\"}}A{{.}}{{end}}M", no_functions());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->template_names(), (std::vector<std::string>{"a", "main"}));
  EXPECT_TRUE((*t)->has_template("a"));
  auto a = (*t)->execute_template("a", Value::integer(1));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "A1");
  auto none = (*t)->execute_template("zz", Value());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.message(), "template: no template \"zz\" associated with template \"main\"");
}

TEST(TemplateConcurrency, OneTemplateExecutesOnManyThreadsAtOnce) {
  auto t =
      Template::parse("t",
                      "{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}{{define \"x\"}}[{{.}}]{{end}}"
                      "{{range .l}}{{template \"x\" .}}{{end}}{{printf \"%05.1f\" .fl}}{{.a.b}}",
                      no_functions());
  ASSERT_TRUE(t.ok());
  Value data = json_data(kData);
  Value good = json_data(R"({"m": {"k": 1, "j": "v"}, "l": [1, "x"], "fl": 1.5, "a": {}})");
  auto expected_ok = (*t)->execute(good);
  auto expected_err = (*t)->execute(data);
  ASSERT_TRUE(expected_ok.ok()) << expected_ok.message();
  ASSERT_FALSE(expected_err.ok());
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 500; ++n) {
        auto ok = (*t)->execute(good);
        auto err = (*t)->execute(data);
        if (!ok.ok() || *ok != *expected_ok || err.ok() || err.message() != expected_err.message())
          ++mismatches[static_cast<std::size_t>(i)];
      }
    });
  }
  for (auto& th : threads)
    th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  EXPECT_EQ(*expected_ok, "j=v;k=1;[1][x]001.5<no value>");
}

}  // namespace
}  // namespace meshop::template_engine::testing

namespace meshop::template_engine::testing {
namespace {

// A string literal that a template stores into the data (here with sprig's `set`) must stay
// valid after the Template is gone: data often outlives the template that filled it.
TEST(TemplateLifetime, LiteralStoredIntoDataOutlivesTheTemplate) {
  Value data = json_data(R"({"m": {}})");
  {
    auto t = Template::parse("t", R"({{ $_ := set .m "k" "a literal string, long enough" }})",
                             default_functions());
    ASSERT_TRUE(t.ok()) << t.message();
    auto out = (*t)->execute(data);
    ASSERT_TRUE(out.ok()) << out.message();
  }  // the only reference to the parsed template is gone here
  std::vector<std::string> churn(64, std::string(64, 'x'));  // reuse freed memory if any
  const Value* m = data.as_map()->find("m");
  ASSERT_NE(m, nullptr);
  const Value* k = m->as_map()->find("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->as_string(), "a literal string, long enough");
}

}  // namespace
}  // namespace meshop::template_engine::testing

namespace meshop::template_engine::testing {
namespace {

std::string sprig(std::string_view tmpl, std::string_view json = kData) {
  return render_with(default_functions(), tmpl, json_data(json));
}

// A deliberate divergence from Go (not in the Go corpus): values are reference-counted, so a
// map that contains itself would never be freed, and the
// store that would close a cycle is an error (Go builds the cycle, and then cannot print it).
TEST(TemplateCycles, SetRefusesToStoreAMapIntoItselfDirectlyOrThroughOthers) {
  EXPECT_THAT(sprig(R"({{ $m := dict }}{{ $_ := set $m "self" $m }})"),
              ::testing::HasSubstr("error calling set: the value contains the dictionary"));
  EXPECT_THAT(sprig(R"({{ $a := dict }}{{ $b := dict "a" $a }}{{ $_ := set $a "b" $b }})"),
              ::testing::HasSubstr("cyclic data is not supported"));
  EXPECT_THAT(sprig(R"({{ $a := dict }}{{ $_ := set $a "l" (list 1 (dict "x" $a)) }})"),
              ::testing::HasSubstr("cyclic data is not supported"));
  // Sharing without a cycle stays allowed: the same map under two keys.
  EXPECT_EQ(sprig(R"({{ $a := dict "k" 1 }}{{ $m := dict }}{{ $_ := set $m "x" $a }})"
                  R"({{ $_ := set $m "y" $a }}{{ $m }})"),
            "OK map[x:map[k:1] y:map[k:1]]");
}

TEST(TemplateCycles, MergeRefusesCyclesAndMergesASubMapIntoItsParent) {
  EXPECT_THAT(sprig(R"({{ $m := dict }}{{ $_ := merge $m (dict "self" $m) }})"),
              ::testing::HasSubstr("error calling merge: the value contains the dictionary"));
  // `src` reachable from `dst`: the recursive merge must not iterate a vector it grows.
  EXPECT_EQ(sprig(R"({{ $m := dict "a" (dict "a" (dict "z" 1 "y" 2 "x" 3)) }})"
                  R"({{ $_ := mergeOverwrite $m $m.a }}{{ $m }})"),
            "OK map[a:map[a:map[x:3 y:2 z:1] x:3 y:2 z:1]]");
  EXPECT_EQ(sprig(R"({{ $m := dict "k" 1 }}{{ $_ := merge $m $m }}{{ $m }})"), "OK map[k:1]");
}

}  // namespace
}  // namespace meshop::template_engine::testing
