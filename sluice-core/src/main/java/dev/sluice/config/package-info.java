/**
 * The native YAML configuration: {@link dev.sluice.config.ConfigLoader} reads a file or a
 * directory of files into a {@link dev.sluice.RuleSet}, with every error named by file, line and
 * column and lint warnings for windows that can never bind. See {@code docs/configuration.md}.
 */
package dev.sluice.config;
