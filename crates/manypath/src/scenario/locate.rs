//! Where a field is written in a scenario's text: the line of a dotted path
//! (`traffic[1].size`, or `traffic.1.size` as overrides write it), read from the
//! document's spans, so an error can point at the user's own line.

use toml_edit::{ImDocument, InlineTable, Item, Table, Value};

/// One step of a field path: a key, or an index into an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// `traffic[1].size.fixed` (or `traffic.1.size.fixed`) as segments; a key that is a whole
/// number is kept as a key too, the walk reading it as an index where an array is.
pub fn segments(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Segment::Key(key.to_string()));
        }
        while let Some(end) = rest.find(']') {
            match rest[1..end].parse() {
                Ok(i) => out.push(Segment::Index(i)),
                Err(_) => out.push(Segment::Key(rest[1..end].to_string())),
            }
            rest = &rest[end + 1..];
        }
    }
    out
}

/// A path as the checker writes it: `traffic[1].size`.
pub fn dotted(path: &[Segment]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Segment::Key(k) if out.is_empty() => out.push_str(k),
            Segment::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Table(&'a Table),
    Item(&'a Item),
    Value(&'a Value),
}

type Span = Option<std::ops::Range<usize>>;

impl<'a> Node<'a> {
    /// The child at `seg`, with the span of the key that names it (if a key does).
    fn child(self, seg: &Segment) -> Option<(Node<'a>, Span)> {
        let key = match seg {
            Segment::Key(k) => k.clone(),
            Segment::Index(i) => i.to_string(),
        };
        let index = match seg {
            Segment::Index(i) => Some(*i),
            Segment::Key(k) => k.parse().ok(),
        };
        match self {
            Node::Table(t) | Node::Item(Item::Table(t)) => table_child(t, &key),
            Node::Item(Item::ArrayOfTables(a)) => a.get(index?).map(|t| (Node::Table(t), t.span())),
            Node::Item(Item::Value(v)) | Node::Value(v) => match v {
                Value::InlineTable(t) => inline_child(t, &key),
                Value::Array(a) => a.get(index?).map(|v| (Node::Value(v), v.span())),
                Value::String(_)
                | Value::Integer(_)
                | Value::Float(_)
                | Value::Boolean(_)
                | Value::Datetime(_) => None,
            },
            Node::Item(Item::None) => None,
        }
    }

    fn span(self) -> Span {
        match self {
            Node::Table(t) => t.span(),
            Node::Item(i) => i.span(),
            Node::Value(v) => v.span(),
        }
    }
}

fn table_child<'a>(t: &'a Table, key: &str) -> Option<(Node<'a>, Span)> {
    let item = t.get(key)?;
    let span = t.key(key).and_then(|k| k.span());
    Some((Node::Item(item), span))
}

fn inline_child<'a>(t: &'a InlineTable, key: &str) -> Option<(Node<'a>, Span)> {
    let value = t.get(key)?;
    let span = t.key(key).and_then(|k| k.span());
    Some((Node::Value(value), span))
}

/// The 1-based line where `path` is written in `text`: its key's line, or for a table
/// its header's; for a path that goes further than the text (a field that is not
/// written), the line of the deepest part that is. None for text that does not parse
/// or a path none of which is written.
pub fn line_of(text: &str, path: &[Segment]) -> Option<usize> {
    let doc = ImDocument::parse(text).ok()?;
    let mut node = Node::Table(doc.as_table());
    let mut at: Option<usize> = None;
    for seg in path {
        let Some((child, key_span)) = node.child(seg) else {
            break;
        };
        if let Some(s) = key_span.or_else(|| child.span()) {
            at = Some(s.start);
        }
        node = child;
    }
    at.map(|a| text[..a.min(text.len())].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\nduration_ms = 1\n\n[topology.leaf_spine]\nleaves = 2\n\n[[traffic]]\npattern = \"incast\"\n\n[[traffic]]\npattern = \"incast\"\nsize = { fixed = 5 }\n";

    fn line(path: &str) -> Option<usize> {
        line_of(TEXT, &segments(path))
    }

    #[test]
    fn keys_tables_and_array_entries_have_their_lines() {
        assert_eq!(line("duration_ms"), Some(2));
        assert_eq!(line("topology.leaf_spine"), Some(4));
        assert_eq!(line("topology.leaf_spine.leaves"), Some(5));
        assert_eq!(line("traffic[1]"), Some(10));
        assert_eq!(line("traffic.1.size.fixed"), Some(12));
        assert_eq!(line("traffic[0].pattern"), Some(8));
    }

    #[test]
    fn a_field_not_written_takes_the_line_of_its_table() {
        assert_eq!(line("topology.leaf_spine.spines"), Some(4));
        assert_eq!(line("traffic[1].class"), Some(10));
        assert_eq!(line("seed"), None);
    }

    #[test]
    fn paths_read_both_ways() {
        let want = vec![
            Segment::Key("traffic".into()),
            Segment::Index(1),
            Segment::Key("size".into()),
        ];
        assert_eq!(segments("traffic[1].size"), want);
        assert_eq!(dotted(&want), "traffic[1].size");
        assert_eq!(segments("traffic.1.size")[1], Segment::Key("1".into()));
    }
}
