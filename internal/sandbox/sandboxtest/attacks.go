package sandboxtest

import (
	"fmt"
	"strings"
)

// chain is a template's fields prefix0..prefixN, each made from the one
// before it (PREV in step): how a tenant makes a small template cost
// exponentially much.
func chain(prefix string, n int, first, step string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s0: %s\n", prefix, first)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%d: %s\n", prefix, i, strings.ReplaceAll(step, "PREV", fmt.Sprintf("%s%d", prefix, i-1)))
	}
	return b.String()
}

// output renders x's length into a ConfigMap, so that x is evaluated.
const output = `output: {apiVersion: "v1", kind: "ConfigMap", data: x: "\(len(x))"}` + "\n"

// Attacks are templates a tenant may write that no evaluation budget can
// afford (issue 27): each must end with a *cueeval.BudgetError.
var Attacks = map[string]string{
	// 2^40 bytes if it were ever built.
	"string doubling": "parameter: {}\n" + chain("a", 40, `"ab"`, "PREV + PREV") + "x: a40\n" + output,
	// 10^10 iterations.
	"comprehension": "import \"list\"\nparameter: {}\nr: list.Range(0, 100000, 1)\nx: [for a in r for b in r if a == -1 {a}]\n" + output,
	// 2^32 elements.
	"huge list": "import \"list\"\nparameter: {}\n" + chain("l", 32, `["xxxxxxxx"]`, "list.Concat([PREV, PREV])") + "x: l32\n" + output,
	// A struct 40,000 levels deep (800 KiB: a definition must fit in etcd).
	"deep nesting": "parameter: {}\n" + chain("n", 40000, `{}`, "{a: PREV}") + "x: n40000\n" + output,
	// 4,000 alternatives over 16 MiB.
	"regular expression": "import (\"regexp\"\n\"strings\"\n\"list\")\nparameter: {}\n" + chain("s", 23, `"ab"`, "PREV + PREV") +
		"pat: strings.Join([for i in list.Range(0, 4000, 1) {\"a\\(i)b|\"}], \"\") + \"(a|b)*c\"\nx: [regexp.Match(pat, s23)]\n" + output,
}

// Doubling is the attack of issue 27, n doublings of a string.
func Doubling(n int) string {
	return "parameter: {}\n" + chain("a", n, `"ab"`, "PREV + PREV") + fmt.Sprintf("x: a%d\n", n) + output
}

// Names are the attacks' names, in a fixed order.
var Names = []string{"string doubling", "comprehension", "huge list", "deep nesting", "regular expression"}
