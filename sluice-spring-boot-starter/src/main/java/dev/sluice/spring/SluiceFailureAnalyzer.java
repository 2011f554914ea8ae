package dev.sluice.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Prints a misconfiguration as Boot prints its own: what went wrong, then what to do. */
final class SluiceFailureAnalyzer extends AbstractFailureAnalyzer<SluiceConfigurationException> {
  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, SluiceConfigurationException cause) {
    return new FailureAnalysis("Sluice: " + cause.getMessage(), cause.action(), cause);
  }
}
