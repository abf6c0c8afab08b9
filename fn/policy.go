package fn

import (
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// What the platform lets a claim ask for. Every claim field is the
// tenant's to write; the Input is the platform's. The checks here hold a
// resolved claim to the Input's policy, and each refusal names the claim's
// field, the limit, and input.policy.* as the platform's setting.

// inClearText reports whether m's credentials would cross the network in
// clear text: m is pulled from plain http:// with a Secret, and the
// platform does not list its host in input.policy.plainHTTPCredentialHosts.
// The message says so and how to fix it.
func inClearText(m model, in *v1beta1.Input) (string, bool) {
	if m.Secret == nil || m.Scheme != "http" || !m.pulled() {
		return "", false
	}
	host := strings.ToLower(authority(m))
	if p := in.Policy; p != nil {
		for _, h := range p.PlainHTTPCredentialHosts {
			if strings.EqualFold(h, host) {
				return "", false
			}
		}
	}
	return fmt.Sprintf("would send Secret %s to %s in clear text, since %s is plain http://; use https://, or ask your platform team to list %q in input.policy.plainHTTPCredentialHosts", m.Secret.Name, host, m.URI, host), true
}
