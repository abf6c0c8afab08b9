package resolve

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Hosts compared as hosts. The platform's sources
// (input.policy.allowedURIHosts), its clear-text exceptions
// (input.policy.plainHTTPCredentialHosts) and the sharing of credentials
// between versions all ask one question of a URI: which origin do its
// requests reach? The answer is the URI parsed as RFC 3986 does (net/url),
// the way curl, the http(s) puller, reads it, never the text before the
// first '/': query, fragment, userinfo and percent-encoding end or hide a
// host in a real parser. Whatever would make the answer depend on the
// parser (userinfo, '%' or non-ASCII in the host, IPv4 written in hex,
// octal or as one number, control characters, backslashes) is refused;
// case, a trailing dot, the default port and the spelling of an IP address
// never change the answer. host_test.go holds the answer to curl's.

// Origin is where a weights URI's requests go, normalised so that two
// spellings of one origin are equal.
type Origin struct {
	// Scheme is the URI's: hf, s3, gs, http, https or oci.
	Scheme string
	// Host is, for http(s) and oci, a lowercase DNS name without its
	// trailing dot or an IP address in canonical form (IPv6 without
	// brackets); for hf the organisation (lowercase), for s3 and gs the
	// bucket.
	Host string
	// Port is, for http(s) and oci, the port in decimal, the scheme's
	// default when the URI names none (http 80, https and oci 443); empty
	// for hf, s3 and gs.
	Port string
}

// ErrUserinfo is URIOrigin's refusal of a URI with a user name before
// its host (user@host or user:password@host): credentials belong in a
// Secret, and an '@' is the oldest way to make a URI look like it names
// another host.
var ErrUserinfo = errors.New("carries a user name before its host (user@host); put credentials in a Secret and write scheme://host/path")

// defaultPorts are the ports an origin without one reaches.
var defaultPorts = map[string]string{"http": "80", "https": "443", SchemeOCI: "443"}

// IP reports whether the origin's host is an IP address.
func (o Origin) IP() bool {
	_, err := netip.ParseAddr(o.Host)
	return err == nil && o.Port != ""
}

// Authority is host[:port] as a message shows it: the port only when it is
// not the scheme's default, an IPv6 address in brackets.
func (o Origin) Authority() string {
	h := o.Host
	if o.IP() && strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if o.Port == "" || o.Port == defaultPorts[o.Scheme] {
		return h
	}
	return h + ":" + o.Port
}

// String is scheme://authority.
func (o Origin) String() string { return o.Scheme + "://" + o.Authority() }

var (
	// dnsLabel is one label of a host name, lowercase: letters, digits,
	// '-' and '_' (which real names use, e.g. _acme).
	dnsLabel = regexp.MustCompile(`^[a-z0-9_]([-a-z0-9_]{0,61}[a-z0-9_])?$`)
	// numericLabel is a last label that makes a resolver read the whole
	// name as an IPv4 address (inet_aton: 127.1, 0x7f.1, 2130706433,
	// 0177.0.0.1), which netip does not accept.
	numericLabel = regexp.MustCompile(`^(0[xX][0-9a-fA-F]*|[0-9]+)$`)
	// bucketName is an s3:// or gs:// bucket: lowercase letters, digits,
	// '.', '-' and '_', starting and ending with a letter or digit.
	bucketName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9._]{0,220}[a-z0-9])?$`)
)

// URIOrigin parses a weights URI and names the origin its requests reach,
// or says why it cannot name one for certain (the error is the rest of a
// sentence about the URI, with the fix). pvc:// has no origin.
func URIOrigin(uri string) (Origin, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return Origin{}, fmt.Errorf("has no scheme; write scheme://host/path")
	}
	switch scheme {
	case "http", "https":
		return webOrigin(scheme, uri)
	case "hf":
		org, _, _ := strings.Cut(rest, "/")
		if !hfRepo.MatchString(rest) {
			return Origin{}, fmt.Errorf("is not a Hugging Face repository; write hf://org/model")
		}
		return Origin{Scheme: scheme, Host: strings.ToLower(org)}, nil
	case "s3", "gs":
		bucket, _, _ := strings.Cut(rest, "/")
		if !bucketName.MatchString(bucket) || strings.Contains(bucket, "..") {
			return Origin{}, fmt.Errorf("names the bucket %q, which is not a bucket name; write %s://bucket/prefix with a bucket of lowercase letters, digits, '.', '-' and '_'", bucket, scheme)
		}
		return Origin{Scheme: scheme, Host: bucket}, nil
	case SchemeOCI:
		registry, _, _ := strings.Cut(rest, "/")
		return originAt(scheme, registry)
	}
	return Origin{}, fmt.Errorf("scheme %q has no host to compare", scheme)
}

// webOrigin is the origin of an http(s) URI, parsed by net/url.
func webOrigin(scheme, uri string) (Origin, error) {
	form := fmt.Sprintf("write %s://host[:port]/path", scheme)
	for _, c := range uri {
		if c <= ' ' || c == 0x7f || c == '\\' {
			return Origin{}, fmt.Errorf("contains a space, control character or backslash, which URL parsers read differently; %s", form)
		}
	}
	u, err := url.Parse(uri)
	if err != nil {
		return Origin{}, fmt.Errorf("is not a URL (%v); %s", unwrapURLError(err), form)
	}
	if u.User != nil {
		return Origin{}, ErrUserinfo
	}
	if u.Opaque != "" || u.Host == "" {
		return Origin{}, fmt.Errorf("names no host; %s", form)
	}
	// The authority as written: between "//" and the first '/', '?' or
	// '#'. With no userinfo it is the host net/url read, unless
	// percent-encoding was decoded on the way.
	raw := uri[len(scheme)+3:]
	if i := strings.IndexAny(raw, "/?#"); i >= 0 {
		raw = raw[:i]
	}
	if strings.Contains(raw, "%") || raw != u.Host {
		return Origin{}, fmt.Errorf("percent-encodes its host (%q), which parsers decode differently; write the host plainly, %s", raw, form)
	}
	return originAt(scheme, u.Host)
}

// unwrapURLError is err without net/url's repetition of the URI.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// originAt normalises host[:port] (an IPv6 address in brackets) of an
// http(s) or oci origin.
func originAt(scheme, authority string) (Origin, error) {
	form := fmt.Sprintf("write %s://host[:port]/…", scheme)
	o := Origin{Scheme: scheme, Port: defaultPorts[scheme]}
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") {
		end := strings.Index(authority, "]")
		if end < 0 {
			return Origin{}, fmt.Errorf("has an unclosed '[' in its host; %s", form)
		}
		host, port = authority[1:end], authority[end+1:]
		if port != "" && port[0] != ':' {
			return Origin{}, fmt.Errorf("has %q after its IPv6 address; %s", port, form)
		}
		port = strings.TrimPrefix(port, ":")
	} else if i := strings.LastIndex(authority, ":"); i >= 0 {
		host, port = authority[:i], authority[i+1:]
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return Origin{}, fmt.Errorf("has port %q; use a port from 1 to 65535", port)
		}
		o.Port = strconv.Itoa(n)
	}
	if host == "" {
		return Origin{}, fmt.Errorf("names no host; %s", form)
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return Origin{}, fmt.Errorf("has a host %q that is not ASCII; write its ASCII (punycode, xn--) form", host)
		}
	}
	if strings.HasPrefix(authority, "[") {
		a, err := netip.ParseAddr(host)
		switch {
		case err != nil || !a.Is6() || a.Zone() != "":
			return Origin{}, fmt.Errorf("has %q in brackets, which is not an IPv6 address (zones are not allowed); %s", host, form)
		case a.Is4In6():
			return Origin{}, fmt.Errorf("has the IPv4-mapped address [%s]; write the IPv4 address %s instead", host, a.Unmap())
		}
		o.Host = a.String()
		return o, nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		o.Host = a.String()
		return o, nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	labels := strings.Split(name, ".")
	if numericLabel.MatchString(labels[len(labels)-1]) {
		return Origin{}, fmt.Errorf("has the host %q, which resolvers read as an IPv4 address in another notation; write it as four decimal numbers (e.g. 127.0.0.1) or use a name", host)
	}
	if len(name) > 253 {
		return Origin{}, fmt.Errorf("has a host name of %d characters; at most 253 are allowed", len(name))
	}
	for _, l := range labels {
		if !dnsLabel.MatchString(l) {
			return Origin{}, fmt.Errorf("has the host %q, which is not a host name (letters, digits, '-' and '_' in dot-separated labels) nor an IP address; %s", host, form)
		}
	}
	o.Host = name
	return o, nil
}

// matches reports whether o is one of the origins an entry of
// input.policy.allowedURIHosts allows: entry is "<scheme>://" and then
// "*" for any, "*.domain[:port]" for a name below domain on that port, or
// the authority itself. Wildcards match names, never IP addresses.
func (o Origin) matches(entry string) bool {
	scheme, want, ok := strings.Cut(entry, "://")
	if !ok || scheme != o.Scheme {
		return false
	}
	if want == "*" {
		return true
	}
	if domain, ok := strings.CutPrefix(want, "*."); ok {
		w, err := URIOrigin(scheme + "://" + domain)
		return err == nil && !o.IP() && w.Port == o.Port && strings.HasSuffix(o.Host, "."+w.Host)
	}
	w, err := URIOrigin(scheme + "://" + want)
	return err == nil && w == o
}

// entryOrigin checks an entry of input.policy.allowedURIHosts, saying why
// it cannot match.
func entryOrigin(entry string) error {
	scheme, want, _ := strings.Cut(entry, "://")
	if want == "*" {
		return nil
	}
	want = strings.TrimPrefix(want, "*.")
	_, err := URIOrigin(scheme + "://" + want)
	return err
}
