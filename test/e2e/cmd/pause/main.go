// Command pause is the pod sandbox image of the e2e's real node: it holds
// the pod's namespaces open and does nothing else until it is told to stop.
// A static Go binary on an empty base, so the node needs no registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
