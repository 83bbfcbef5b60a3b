// Package sandboxtest holds CUE templates no evaluation budget can
// afford, for the tests of the sandbox, the controller and the chaos
// suite: what a tenant may write to take a controller down (issue 27).
//
// Usage:
//
//	for _, name := range sandboxtest.Names {
//		template := sandboxtest.Attacks[name] // must end with a *cueeval.BudgetError
//	}
//
// Files:
//
//	attacks.go  Attacks and Names: the templates; Doubling, the attack of issue 27 at any size
package sandboxtest
