// kubectl for the tests that run documented commands (test/migration/guide.own-stack.test.ts): the command tree of
// k8s.io/kubectl at the embedded stack's Kubernetes release, started as upstream's cmd/kubectl starts it.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
