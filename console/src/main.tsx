// The console's entry: theme, router, and the shell around every page.
import { render } from 'preact';
import './styles.css';
import './state/prefs';
import { startRouter } from './router';
import { App } from './App';

startRouter();
render(<App />, document.getElementById('app')!);
