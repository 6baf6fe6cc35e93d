// Just enough JSON for the driver protocol: commands are objects of strings, numbers,
// booleans, null and objects of those; observations nest maps and lists. Kept here so the driver needs no jar
// beyond kafka-clients and its compression/logging dependencies.

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

final class FlatJson {
    private final String text;
    private int at;

    private FlatJson(String text) {
        this.text = text;
    }

    static Map<String, Object> parse(String text) {
        return new FlatJson(text).object();
    }

    /** An object; its values may be objects too (a command's security settings). */
    private Map<String, Object> object() {
        Map<String, Object> result = new LinkedHashMap<>();
        expect('{');
        if (peek() == '}') {
            at++;
            return result;
        }
        do {
            String name = string();
            expect(':');
            result.put(name, value());
        } while (next() == ',');
        return result;
    }

    private char peek() {
        while (Character.isWhitespace(text.charAt(at))) {
            at++;
        }
        return text.charAt(at);
    }

    private char next() {
        char c = peek();
        at++;
        return c;
    }

    private void expect(char wanted) {
        char got = next();
        if (got != wanted) {
            throw new IllegalArgumentException("expected '" + wanted + "' at " + (at - 1) + ", got '" + got + "'");
        }
    }

    private Object value() {
        char c = peek();
        if (c == '"') {
            return string();
        }
        if (c == '{') {
            return object();
        }
        int start = at;
        while (at < text.length() && ",}] \t\r\n".indexOf(text.charAt(at)) < 0) {
            at++;
        }
        String word = text.substring(start, at);
        return switch (word) {
            case "null" -> null;
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> word.contains(".") || word.contains("e") || word.contains("E")
                ? (Object) Double.parseDouble(word) : (Object) Long.parseLong(word);
        };
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        for (char c = text.charAt(at++); c != '"'; c = text.charAt(at++)) {
            if (c == '\\') {
                char escaped = text.charAt(at++);
                switch (escaped) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(escaped);
                }
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    static String write(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String s) {
            return quote(s);
        }
        if (value instanceof Number || value instanceof Boolean) {
            return value.toString();
        }
        if (value instanceof Map<?, ?> map) {
            StringBuilder out = new StringBuilder("{");
            map.forEach((k, v) -> {
                if (out.length() > 1) {
                    out.append(',');
                }
                out.append(quote(String.valueOf(k))).append(':').append(write(v));
            });
            return out.append('}').toString();
        }
        if (value instanceof Collection<?> items) {
            StringBuilder out = new StringBuilder("[");
            for (Object item : items) {
                if (out.length() > 1) {
                    out.append(',');
                }
                out.append(write(item));
            }
            return out.append(']').toString();
        }
        throw new IllegalArgumentException("cannot write " + value.getClass());
    }
}
