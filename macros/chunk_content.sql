{#- Content of a chunk exactly as ingest computes it: Python's text[char_start:char_end].strip().
    SQL substring counts code points from 1, like Python's str indices from 0; the trim set is every
    character for which Python's str.isspace() is true (generated from Python, so the two agree). -#}
{% macro python_whitespace() -%}
(chr(9) || chr(10) || chr(11) || chr(12) || chr(13) || chr(28) || chr(29) || chr(30) || chr(31) || chr(32) || chr(133) || chr(160) || chr(5760) || chr(8192) || chr(8193) || chr(8194) || chr(8195) || chr(8196) || chr(8197) || chr(8198) || chr(8199) || chr(8200) || chr(8201) || chr(8202) || chr(8232) || chr(8233) || chr(8239) || chr(8287) || chr(12288))
{%- endmacro %}

{% macro chunk_content(text, char_start, char_end) -%}
trim(substring({{ text }}, {{ char_start }} + 1, {{ char_end }} - {{ char_start }}), {{ python_whitespace() }})
{%- endmacro %}
