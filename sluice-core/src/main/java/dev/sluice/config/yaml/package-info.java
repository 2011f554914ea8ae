/**
 * YAML with the file, line and column of every key and value: {@link
 * dev.sluice.config.yaml.YamlTree} reads a text into {@link dev.sluice.config.yaml.Node}s. The
 * native reader walks them, and so do the reader of Envoy files ({@code dev.sluice.config.envoy})
 * and the service's reader of {@code rlqs:} sections, so that all name places the same way. Not
 * part of the API: the module exports this package to the service only.
 */
package dev.sluice.config.yaml;
