// Command kube-apiserver is the Kubernetes API server of the pinned release, built from
// this module so that its staging modules are the ones go.mod pins.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
