package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed templates/reference.html
var referenceHTML string

//go:embed templates/reference.css
var styleSheet string

var pageTemplate = template.Must(template.New("reference.html").Parse(referenceHTML))

// renderPage renders the reference page of every document.
func renderPage() ([]byte, error) {
	docs, err := Loaded()
	if err != nil {
		return nil, err
	}
	p := pageView{Style: template.CSS(styleSheet)}
	for _, d := range Documents() {
		p.Docs = append(p.Docs, newDocView(d, docs[d.Name]))
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("openapi: rendering the reference page: %w", err)
	}
	return b.Bytes(), nil
}

// The views of the page: plain data, everything the template prints already
// decided here.

type pageView struct {
	Style template.CSS
	Docs  []docView
}

type docView struct {
	Name, Title, Label, Version, Summary string
	Description                          template.HTML
	Servers                              []string
	Security                             []securityView
	Tags                                 []tagView
	Webhooks                             []opView
	Schemas                              []schemaView
}

type securityView struct {
	Name, Kind  string
	Description template.HTML
	TokenURL    string
	Scopes      []scopeView
}

type scopeView struct{ Name, Description string }

type tagView struct {
	Name, Anchor string
	Description  template.HTML
	Ops          []opView
}

type opView struct {
	Anchor, Method, Path, Summary, ID string
	Description                       template.HTML
	Auth                              []string
	Params                            []paramView
	Request                           *bodyView
	Responses                         []responseView
	line                              int
}

type paramView struct {
	Name, In    string
	Type        []typePart
	Required    bool
	Description template.HTML
	Notes       string
}

type bodyView struct {
	Required    bool
	Description template.HTML
	Contents    []contentView
}

type responseView struct {
	Status      string
	Class       string
	Description template.HTML
	Headers     []paramView
	Contents    []contentView
}

type contentView struct {
	MediaType string
	Type      []typePart
	Props     []propView
	Examples  []exampleView
}

type exampleView struct{ Name, Summary, Body string }

type schemaView struct {
	Name, Anchor string
	Description  template.HTML
	Type         []typePart
	Notes        string
	Props        []propView
}

type propView struct {
	Name        string
	Type        []typePart
	Required    bool
	Description template.HTML
	Notes       string
	Props       []propView
}

// typePart is a piece of a type's description; Link, when set, is the
// anchor of a component schema.
type typePart struct{ Text, Link string }

func newDocView(d Document, doc *openapi3.T) docView {
	v := docView{Name: d.Name, Label: d.Title, Title: doc.Info.Title, Version: doc.Info.Version,
		Summary: doc.Info.Summary, Description: markdown(doc.Info.Description)}
	for _, s := range doc.Servers {
		v.Servers = append(v.Servers, s.URL+" — "+s.Description)
	}
	if doc.Components != nil {
		for _, name := range sortedKeys(doc.Components.SecuritySchemes) {
			v.Security = append(v.Security, newSecurityView(name, doc.Components.SecuritySchemes[name].Value))
		}
	}
	r := renderer{doc: d.Name}
	byTag := map[string][]opView{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := r.op(doc, method, path, item, op)
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			byTag[tag] = append(byTag[tag], o)
		}
	}
	tags := make([]*openapi3.Tag, 0, len(doc.Tags))
	tags = append(tags, doc.Tags...)
	for name := range byTag {
		if doc.Tags.Get(name) == nil {
			tags = append(tags, &openapi3.Tag{Name: name})
		}
	}
	for _, t := range tags {
		ops := byTag[t.Name]
		if len(ops) == 0 {
			continue
		}
		sortOps(ops)
		v.Tags = append(v.Tags, tagView{Name: t.Name, Anchor: d.Name + "-tag-" + slug(t.Name),
			Description: markdown(t.Description), Ops: ops})
	}
	for _, name := range sortedKeys(doc.Webhooks) {
		item := doc.Webhooks[name]
		for method, op := range item.Operations() {
			v.Webhooks = append(v.Webhooks, r.op(doc, method, name, item, op))
		}
	}
	sortOps(v.Webhooks)
	if doc.Components != nil {
		for _, name := range sortedKeys(doc.Components.Schemas) {
			s := doc.Components.Schemas[name].Value
			v.Schemas = append(v.Schemas, schemaView{Name: name, Anchor: r.schemaAnchor(name),
				Description: markdown(s.Description), Type: r.typeOf(&openapi3.SchemaRef{Value: s}),
				Notes: notes(s), Props: r.props(s, 0)})
		}
	}
	return v
}

func newSecurityView(name string, s *openapi3.SecurityScheme) securityView {
	v := securityView{Name: name, Description: markdown(s.Description)}
	switch {
	case s.Type == "http":
		v.Kind = "HTTP " + s.Scheme
	case s.Type == "oauth2" && s.Flows != nil && s.Flows.ClientCredentials != nil:
		v.Kind = "OAuth 2.0 client credentials"
		f := s.Flows.ClientCredentials
		v.TokenURL = f.TokenURL
		for _, sc := range sortedKeys(f.Scopes) {
			v.Scopes = append(v.Scopes, scopeView{sc, f.Scopes[sc]})
		}
	default:
		v.Kind = s.Type
	}
	return v
}

// renderer renders the parts of one document.
type renderer struct{ doc string }

func (r renderer) schemaAnchor(name string) string { return r.doc + "-schema-" + name }

func (r renderer) op(doc *openapi3.T, method, path string, item *openapi3.PathItem, op *openapi3.Operation) opView {
	v := opView{Method: method, Path: path, Summary: op.Summary, ID: op.OperationID,
		Anchor: r.doc + "-op-" + op.OperationID, Description: markdown(op.Description)}
	if op.Origin != nil && op.Origin.Key != nil {
		v.line = op.Origin.Key.Line
	}
	security := doc.Security
	if op.Security != nil {
		security = *op.Security
	}
	for _, req := range security {
		if len(req) == 0 {
			v.Auth = append(v.Auth, "none")
			continue
		}
		for _, name := range sortedKeys(req) {
			if scopes := req[name]; len(scopes) > 0 {
				v.Auth = append(v.Auth, name+": "+strings.Join(scopes, ", "))
			} else {
				v.Auth = append(v.Auth, name)
			}
		}
	}
	params := slices.Clone(item.Parameters)
	params = append(params, op.Parameters...)
	for _, p := range params {
		v.Params = append(v.Params, r.param(p.Value.Name, p.Value.In, p.Value.Required, p.Value.Description, p.Value.Schema))
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		b := op.RequestBody.Value
		v.Request = &bodyView{Required: b.Required, Description: markdown(b.Description), Contents: r.contents(b.Content)}
	}
	if op.Responses != nil {
		codes := sortedKeys(op.Responses.Map())
		for _, code := range codes {
			res := op.Responses.Value(code).Value
			rv := responseView{Status: code, Class: "s" + code[:1], Description: markdown(deref(res.Description)),
				Contents: r.contents(res.Content)}
			for _, name := range sortedKeys(res.Headers) {
				h := res.Headers[name].Value
				rv.Headers = append(rv.Headers, r.param(name, "header", h.Required, h.Description, h.Schema))
			}
			v.Responses = append(v.Responses, rv)
		}
	}
	return v
}

func (r renderer) param(name, in string, required bool, description string, schema *openapi3.SchemaRef) paramView {
	p := paramView{Name: name, In: in, Required: required, Description: markdown(description)}
	if schema != nil {
		p.Type = r.typeOf(schema)
		if schema.Value != nil {
			p.Notes = notes(schema.Value)
		}
	}
	return p
}

func (r renderer) contents(content openapi3.Content) []contentView {
	var out []contentView
	for _, mt := range sortedKeys(content) {
		m := content[mt]
		c := contentView{MediaType: mt}
		if m.Schema != nil {
			c.Type = r.typeOf(m.Schema)
			if m.Schema.Ref == "" && m.Schema.Value != nil {
				c.Props = r.props(m.Schema.Value, 0)
			}
		}
		for _, name := range sortedKeys(m.Examples) {
			ex := m.Examples[name].Value
			c.Examples = append(c.Examples, exampleView{Name: name, Summary: ex.Summary, Body: exampleBody(mt, ex.Value)})
		}
		if m.Example != nil {
			c.Examples = append(c.Examples, exampleView{Name: "example", Body: exampleBody(mt, m.Example)})
		}
		out = append(out, c)
	}
	return out
}

// props lists the properties of an object schema, or of the inline object
// items of an array, with inline sub-objects nested up to a few levels;
// component schemas are linked, not expanded.
func (r renderer) props(s *openapi3.Schema, depth int) []propView {
	if s == nil || depth > 4 {
		return nil
	}
	if s.Type.Is("array") && s.Items != nil && s.Items.Ref == "" {
		return r.props(s.Items.Value, depth)
	}
	var out []propView
	for _, name := range sortedKeys(s.Properties) {
		ref := s.Properties[name]
		p := propView{Name: name, Type: r.typeOf(ref), Required: slices.Contains(s.Required, name)}
		if ref.Value != nil {
			p.Description = markdown(ref.Value.Description)
			p.Notes = notes(ref.Value)
			if ref.Ref == "" {
				p.Props = r.props(ref.Value, depth+1)
			}
		}
		out = append(out, p)
	}
	for _, sub := range s.AllOf {
		if sub.Ref == "" {
			out = append(out, r.props(sub.Value, depth)...)
		}
	}
	return out
}

// typeOf describes a schema's type: "string | null", "array of Customer", …
func (r renderer) typeOf(ref *openapi3.SchemaRef) []typePart {
	if ref == nil {
		return []typePart{{Text: "any"}}
	}
	if name, ok := strings.CutPrefix(ref.Ref, "#/components/schemas/"); ok {
		return []typePart{{Text: name, Link: "#" + r.schemaAnchor(name)}}
	}
	s := ref.Value
	if s == nil {
		return []typePart{{Text: "any"}}
	}
	join := func(refs openapi3.SchemaRefs, sep string) []typePart {
		var out []typePart
		for i, x := range refs {
			if i > 0 {
				out = append(out, typePart{Text: sep})
			}
			out = append(out, r.typeOf(x)...)
		}
		return out
	}
	switch {
	case len(s.OneOf) > 0:
		return join(s.OneOf, " | ")
	case len(s.AnyOf) > 0:
		return join(s.AnyOf, " | ")
	case len(s.AllOf) > 0 && (s.Type == nil || len(*s.Type) == 0):
		return join(s.AllOf, " & ")
	}
	if s.Type == nil || len(*s.Type) == 0 {
		if s.Const != nil {
			return []typePart{{Text: fmt.Sprintf("%v", s.Const)}}
		}
		return []typePart{{Text: "any"}}
	}
	var out []typePart
	for i, t := range *s.Type {
		if i > 0 {
			out = append(out, typePart{Text: " | "})
		}
		switch {
		case t == "array":
			out = append(out, typePart{Text: "array of "})
			out = append(out, r.typeOf(s.Items)...)
		case s.Format != "" && t != "null":
			out = append(out, typePart{Text: t + " (" + s.Format + ")"})
		default:
			out = append(out, typePart{Text: t})
		}
	}
	return out
}

// notes sums up a schema's constraints.
func notes(s *openapi3.Schema) string {
	var n []string
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			if e == nil {
				continue // "null" is in the type already
			}
			vals = append(vals, fmt.Sprintf("%v", e))
		}
		n = append(n, "one of: "+strings.Join(vals, ", "))
	}
	if s.Const != nil {
		n = append(n, fmt.Sprintf("always %v", s.Const))
	}
	if s.Pattern != "" {
		n = append(n, "pattern "+s.Pattern)
	}
	if s.Min != nil {
		n = append(n, "≥ "+num(*s.Min))
	}
	if s.ExclusiveMin.Value != nil {
		n = append(n, "> "+num(*s.ExclusiveMin.Value))
	}
	if s.Max != nil {
		n = append(n, "≤ "+num(*s.Max))
	}
	if s.MinLength > 0 {
		n = append(n, fmt.Sprintf("at least %d characters", s.MinLength))
	}
	if s.MaxLength != nil {
		n = append(n, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if s.MinItems > 0 {
		n = append(n, fmt.Sprintf("at least %d items", s.MinItems))
	}
	if s.MaxItems != nil {
		n = append(n, fmt.Sprintf("at most %d items", *s.MaxItems))
	}
	if s.Default != nil {
		n = append(n, fmt.Sprintf("default %v", s.Default))
	}
	return strings.Join(n, "; ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// exampleBody renders an example as the body would be sent.
func exampleBody(mediaType string, v any) string {
	if mediaType == "application/x-www-form-urlencoded" {
		if m, ok := v.(map[string]any); ok {
			form := url.Values{}
			for _, k := range sortedKeys(m) {
				form.Set(k, fmt.Sprintf("%v", m[k]))
			}
			return form.Encode()
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSpace(b.String())
}

func sortOps(ops []opView) {
	slices.SortStableFunc(ops, func(a, b opView) int {
		if a.line != b.line {
			return a.line - b.line
		}
		return strings.Compare(a.Path+a.Method, b.Path+b.Method)
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	strong   = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// markdown renders the little Markdown the documents' descriptions use:
// paragraphs, `code` and **strong**. The text is escaped first.
func markdown(s string) template.HTML {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	var b strings.Builder
	for _, para := range strings.Split(s, "\n\n") {
		para = strings.Join(strings.Fields(para), " ")
		para = template.HTMLEscapeString(para)
		para = codeSpan.ReplaceAllString(para, "<code>$1</code>")
		para = strong.ReplaceAllString(para, "<strong>$1</strong>")
		b.WriteString("<p>" + para + "</p>")
	}
	return template.HTML(b.String())
}
