//! Topologies from graph files: GraphML and networkx's node-link JSON, read into the
//! same `CustomTopologySpec` an inline `[topology.custom]` gives, so one set of checks
//! covers every source. Nodes carry `kind` (`host` or `switch`) and optionally `tier`;
//! edges optionally `tier`, `rate_gbps` and `delay_us`. Other attributes (labels,
//! coordinates) are ignored: graph tools add their own.

use super::schema::{CustomLinkSpec, CustomNodeSpec, CustomTopologySpec, NodeKindSpec};
use std::collections::HashMap;

/// A problem in a graph file: where (`nodes[3]`, `links[5].rate_gbps`, `line 12`) and
/// what was expected.
pub(super) type GraphError = (String, String);

/// The attributes read from a node or an edge, as text.
type Attrs = HashMap<String, String>;

fn node_spec(i: usize, name: String, attrs: &Attrs) -> Result<CustomNodeSpec, GraphError> {
    let kind = match attrs.get("kind").map(|k| k.trim()) {
        Some("host") => NodeKindSpec::Host,
        Some("switch") => NodeKindSpec::Switch,
        Some(other) => {
            return Err((
                format!("nodes[{i}] ({name:?}).kind"),
                format!("expected \"host\" or \"switch\", got {other:?}"),
            ))
        }
        None => {
            return Err((
                format!("nodes[{i}] ({name:?})"),
                "has no `kind` attribute: expected \"host\" or \"switch\"".into(),
            ))
        }
    };
    let tier = attrs.get("tier").map(|t| t.trim().to_string());
    Ok(CustomNodeSpec { name, kind, tier })
}

fn link_spec(i: usize, a: String, b: String, attrs: &Attrs) -> Result<CustomLinkSpec, GraphError> {
    let number = |key: &str| -> Result<Option<f64>, GraphError> {
        match attrs.get(key) {
            None => Ok(None),
            Some(v) => v.trim().parse::<f64>().map(Some).map_err(|_| {
                (
                    format!("links[{i}] ({a:?}–{b:?}).{key}"),
                    format!("expected a number, got {v:?}"),
                )
            }),
        }
    };
    Ok(CustomLinkSpec {
        tier: attrs.get("tier").map(|t| t.trim().to_string()),
        count: None,
        rate_gbps: number("rate_gbps")?,
        delay_us: number("delay_us")?,
        queue_a: None,
        queue_b: None,
        a,
        b,
    })
}

/// Whether a JSON document is a networkx node-link graph rather than this project's
/// format: node-link output always has `directed` and `multigraph`.
pub(super) fn is_node_link(v: &serde_json::Value) -> bool {
    v.get("directed").is_some() || v.get("multigraph").is_some()
}

/// A networkx node-link graph (`networkx.node_link_data`): `nodes` with `id`, and
/// `links` (or `edges`, networkx ≥ 3.4) with `source` and `target`.
pub(super) fn node_link(v: &serde_json::Value) -> Result<CustomTopologySpec, GraphError> {
    fn text(v: &serde_json::Value) -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    fn attrs(o: &serde_json::Map<String, serde_json::Value>) -> Attrs {
        o.iter()
            .filter_map(|(k, v)| text(v).map(|t| (k.clone(), t)))
            .collect()
    }
    let nodes = v.get("nodes").and_then(|n| n.as_array()).ok_or_else(|| {
        (
            "nodes".to_string(),
            "expected an array of nodes (a networkx node-link graph)".to_string(),
        )
    })?;
    let links = v
        .get("links")
        .or_else(|| v.get("edges"))
        .and_then(|l| l.as_array())
        .ok_or_else(|| {
            (
                "links".to_string(),
                "expected an array `links` (or `edges`) of a networkx node-link graph".to_string(),
            )
        })?;
    let mut spec = CustomTopologySpec::default();
    for (i, n) in nodes.iter().enumerate() {
        let o = n.as_object().ok_or_else(|| {
            (
                format!("nodes[{i}]"),
                "expected an object with an `id`".to_string(),
            )
        })?;
        let id = o.get("id").and_then(text).ok_or_else(|| {
            (
                format!("nodes[{i}]"),
                "expected an `id` (a string or number)".to_string(),
            )
        })?;
        spec.nodes.push(node_spec(i, id, &attrs(o))?);
    }
    for (i, l) in links.iter().enumerate() {
        let o = l.as_object().ok_or_else(|| {
            (
                format!("links[{i}]"),
                "expected an object with `source` and `target`".to_string(),
            )
        })?;
        let end = |key: &str| {
            o.get(key).and_then(text).ok_or_else(|| {
                (
                    format!("links[{i}]"),
                    format!("expected a `{key}` (a node id)"),
                )
            })
        };
        let (a, b) = (end("source")?, end("target")?);
        spec.links.push(link_spec(i, a, b, &attrs(o))?);
    }
    Ok(spec)
}

/// One piece of an XML document: an element's start (with its attributes, and whether it
/// closes itself), its end, or text.
enum Xml {
    Start {
        name: String,
        attrs: Attrs,
        empty: bool,
    },
    End(String),
    Text(String),
}

/// Splits XML text into its pieces, each with its line. Enough XML for GraphML: elements,
/// attributes in either quotes, text, comments, processing instructions, DOCTYPE and
/// CDATA, and the five predefined entities and numeric references.
fn xml_pieces(text: &str) -> Result<Vec<(usize, Xml)>, GraphError> {
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let err = |at: usize, msg: &str| (format!("line {}", line_of(at)), msg.to_string());
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if !rest.starts_with('<') {
            let end = rest.find('<').map_or(text.len(), |e| i + e);
            let t = unescape(&text[i..end]).map_err(|m| err(i, &m))?;
            if !t.trim().is_empty() {
                out.push((line_of(i), Xml::Text(t)));
            }
            i = end;
            continue;
        }
        let skip = |open: &str, close: &str, what: &str| -> Result<Option<usize>, GraphError> {
            if !rest.starts_with(open) {
                return Ok(None);
            }
            rest.find(close)
                .map(|e| Some(i + e + close.len()))
                .ok_or_else(|| err(i, &format!("unterminated {what}")))
        };
        if let Some(next) = skip("<!--", "-->", "comment")? {
            i = next;
            continue;
        }
        if rest.starts_with("<![CDATA[") {
            let e = rest
                .find("]]>")
                .ok_or_else(|| err(i, "unterminated CDATA section"))?;
            out.push((line_of(i), Xml::Text(rest[9..e].to_string())));
            i += e + 3;
            continue;
        }
        if let Some(next) = skip("<?", "?>", "processing instruction")? {
            i = next;
            continue;
        }
        if let Some(next) = skip("<!", ">", "declaration")? {
            i = next;
            continue;
        }
        let close = tag_end(rest).ok_or_else(|| err(i, "unterminated tag: expected `>`"))?;
        let inner = &rest[1..close];
        i += close + 1;
        if let Some(name) = inner.strip_prefix('/') {
            out.push((line_of(i), Xml::End(name.trim().to_string())));
            continue;
        }
        let (inner, empty) = match inner.strip_suffix('/') {
            Some(s) => (s, true),
            None => (inner, false),
        };
        let name_end = inner
            .find(|c: char| c.is_whitespace())
            .unwrap_or(inner.len());
        let name = inner[..name_end].to_string();
        if name.is_empty() {
            return Err(err(i, "a tag without a name"));
        }
        let attrs = attributes(&inner[name_end..]).map_err(|m| err(i, &m))?;
        out.push((line_of(i), Xml::Start { name, attrs, empty }));
    }
    Ok(out)
}

/// Where a tag that starts `s` ends (its `>`, outside quoted attribute values).
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            (None, '<') => return None,
            _ => {}
        }
    }
    None
}

/// The attributes `name="value"` of a tag.
fn attributes(mut s: &str) -> Result<Attrs, String> {
    let mut attrs = Attrs::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return Ok(attrs);
        }
        let eq = s
            .find('=')
            .ok_or_else(|| format!("attribute {:?} has no value", s.trim()))?;
        let name = s[..eq].trim().to_string();
        let v = s[eq + 1..].trim_start();
        let q = v
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
            .ok_or_else(|| format!("attribute {name:?}: expected a quoted value"))?;
        let end = v[1..]
            .find(q)
            .ok_or_else(|| format!("attribute {name:?}: unterminated value"))?;
        attrs.insert(name, unescape(&v[1..1 + end])?);
        s = &v[end + 2..];
    }
}

fn unescape(s: &str) -> Result<String, String> {
    if !s.contains('&') {
        return Ok(s.to_string());
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let semi = rest[at..]
            .find(';')
            .ok_or_else(|| "`&` without `;`: write &amp;".to_string())?;
        let name = &rest[at + 1..at + semi];
        let c = match name {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = name
                    .strip_prefix("#x")
                    .map(|h| u32::from_str_radix(h, 16))
                    .or_else(|| name.strip_prefix('#').map(|d| d.parse::<u32>()))
                    .and_then(|r| r.ok())
                    .and_then(char::from_u32);
                code.ok_or_else(|| format!("unknown entity &{name};"))?
            }
        };
        out.push(c);
        rest = &rest[at + semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A GraphML document: `<key>`s naming the attributes, `<node id>`s and `<edge source
/// target>`s with their `<data key>` values (a key's `<default>` applies where a node or
/// edge has no value).
pub(super) fn graphml(text: &str) -> Result<CustomTopologySpec, GraphError> {
    struct Element {
        name: String,
        line: usize,
    }
    // Key id → (for, attribute name, default).
    let mut keys: HashMap<String, (String, String, Option<String>)> = HashMap::new();
    let mut stack: Vec<Element> = Vec::new();
    let mut nodes: Vec<(usize, String, Attrs)> = Vec::new();
    let mut edges: Vec<(usize, String, String, Attrs)> = Vec::new();
    // The element `<data>` or `<default>` fills: its key, and its text so far.
    let mut data: Option<(String, String)> = None;
    let mut in_edge = false;
    let mut key_id: Option<String> = None;
    let mut root_seen = false;
    for (line, piece) in xml_pieces(text)? {
        let at = format!("line {line}");
        match piece {
            Xml::Start { name, attrs, empty } => {
                if stack.is_empty() {
                    if root_seen || name != "graphml" {
                        return Err((
                            at,
                            format!("expected one <graphml> root element, got <{name}>"),
                        ));
                    }
                    root_seen = true;
                }
                let attr = |k: &str| {
                    attrs
                        .get(k)
                        .cloned()
                        .ok_or_else(|| (at.clone(), format!("<{name}> needs a `{k}` attribute")))
                };
                match name.as_str() {
                    "key" => {
                        let id = attr("id")?;
                        let target = attrs.get("for").cloned().unwrap_or("all".into());
                        let aname = attrs.get("attr.name").cloned().unwrap_or(id.clone());
                        keys.insert(id.clone(), (target, aname, None));
                        key_id = Some(id);
                    }
                    "default" => data = Some((key_id.clone().unwrap_or_default(), String::new())),
                    "node" if !in_edge => nodes.push((line, attr("id")?, Attrs::new())),
                    "edge" => {
                        edges.push((line, attr("source")?, attr("target")?, Attrs::new()));
                        in_edge = true;
                    }
                    "data" => data = Some((attr("key")?, String::new())),
                    _ => {}
                }
                if empty {
                    close(
                        &name,
                        &mut data,
                        &mut in_edge,
                        &mut key_id,
                        &mut keys,
                        &mut nodes,
                        &mut edges,
                    );
                } else {
                    stack.push(Element { name, line });
                }
            }
            Xml::End(name) => {
                let open = stack
                    .pop()
                    .ok_or_else(|| (at.clone(), format!("</{name}> closes no element")))?;
                if open.name != name {
                    return Err((
                        at,
                        format!(
                            "</{name}> closes <{}> (opened at line {})",
                            open.name, open.line
                        ),
                    ));
                }
                close(
                    &name,
                    &mut data,
                    &mut in_edge,
                    &mut key_id,
                    &mut keys,
                    &mut nodes,
                    &mut edges,
                );
            }
            Xml::Text(t) => {
                if let Some((_, v)) = &mut data {
                    v.push_str(&t);
                }
            }
        }
    }
    if let Some(open) = stack.last() {
        return Err((
            format!("line {}", open.line),
            format!("<{}> is never closed", open.name),
        ));
    }
    if !root_seen {
        return Err((
            "line 1".into(),
            "no <graphml> element: not a GraphML file".into(),
        ));
    }
    let named = |attrs: &Attrs, target: &str| -> Attrs {
        let mut out = Attrs::new();
        for (id, (f, name, default)) in &keys {
            if f != target && f != "all" {
                continue;
            }
            if let Some(v) = attrs.get(id).or(default.as_ref()) {
                out.insert(name.clone(), v.clone());
            }
        }
        out
    };
    let mut spec = CustomTopologySpec::default();
    for (i, (_, id, attrs)) in nodes.into_iter().enumerate() {
        spec.nodes.push(node_spec(i, id, &named(&attrs, "node"))?);
    }
    for (i, (_, a, b, attrs)) in edges.into_iter().enumerate() {
        spec.links.push(link_spec(i, a, b, &named(&attrs, "edge"))?);
    }
    Ok(spec)
}

/// What the end of a GraphML element completes: a `<data>` value given to its node or
/// edge, a key's `<default>`, an edge.
fn close(
    name: &str,
    data: &mut Option<(String, String)>,
    in_edge: &mut bool,
    key_id: &mut Option<String>,
    keys: &mut HashMap<String, (String, String, Option<String>)>,
    nodes: &mut [(usize, String, Attrs)],
    edges: &mut [(usize, String, String, Attrs)],
) {
    match name {
        "data" => {
            if let Some((key, v)) = data.take() {
                let target = if *in_edge {
                    edges.last_mut().map(|e| &mut e.3)
                } else {
                    nodes.last_mut().map(|n| &mut n.2)
                };
                if let Some(t) = target {
                    t.insert(key, v);
                }
            }
        }
        "default" => {
            if let Some((key, v)) = data.take() {
                if let Some(k) = keys.get_mut(&key) {
                    k.2 = Some(v);
                }
            }
        }
        "edge" => *in_edge = false,
        "key" => *key_id = None,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <!-- a comment -->
  <key id="d0" for="node" attr.name="kind" attr.type="string"/>
  <key id="d1" for="edge" attr.name="rate_gbps" attr.type="double"><default>10</default></key>
  <key id="d2" for="edge" attr.name="tier" attr.type="string"/>
  <graph edgedefault="undirected">
    <node id="h0"><data key="d0">host</data></node>
    <node id="s&amp;0"><data key="d0">switch</data></node>
    <edge source="h0" target="s&amp;0"/>
    <edge source="h0" target="s&amp;0"><data key="d1">40</data><data key="d2">host</data></edge>
  </graph>
</graphml>"#;

    #[test]
    fn reads_graphml_nodes_edges_and_defaults() {
        let s = graphml(G).unwrap();
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(s.nodes[1].name, "s&0");
        assert_eq!(s.nodes[0].kind, NodeKindSpec::Host);
        assert_eq!(s.links[0].rate_gbps, Some(10.0), "the key's default");
        assert_eq!(s.links[1].rate_gbps, Some(40.0));
        assert_eq!(s.links[1].tier.as_deref(), Some("host"));
    }

    #[test]
    fn malformed_graphml_names_the_line() {
        let e = graphml(&G.replace("</node>\n    <node", "</nod>\n    <node")).unwrap_err();
        assert_eq!(e.0, "line 8", "{e:?}");
        assert!(e.1.contains("</nod> closes <node>"), "{e:?}");
        let e = graphml("<graph></graph>").unwrap_err();
        assert!(e.1.contains("<graphml> root"), "{e:?}");
        let e = graphml(&G.replace("<data key=\"d0\">host</data>", "")).unwrap_err();
        assert!(
            e.0.contains("nodes[0]") && e.1.contains("no `kind`"),
            "{e:?}"
        );
    }

    #[test]
    fn reads_node_link_json() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"directed": false, "multigraph": true, "graph": {},
                "nodes": [{"id": 0, "kind": "host"}, {"id": "s", "kind": "switch", "tier": "tor"}],
                "edges": [{"source": 0, "target": "s", "delay_us": 2, "key": 0}]}"#,
        )
        .unwrap();
        assert!(is_node_link(&v));
        let s = node_link(&v).unwrap();
        assert_eq!(s.nodes[0].name, "0");
        assert_eq!(s.nodes[1].tier.as_deref(), Some("tor"));
        assert_eq!(s.links[0].delay_us, Some(2.0));
        let bad: serde_json::Value = serde_json::from_str(
            r#"{"directed": false, "nodes": [{"id": 0, "kind": "router"}], "links": []}"#,
        )
        .unwrap();
        let e = node_link(&bad).unwrap_err();
        assert!(
            e.0.contains("nodes[0]") && e.1.contains("\"router\""),
            "{e:?}"
        );
    }
}
