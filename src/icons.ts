import { LabIcon } from '@jupyterlab/ui-components';

const rackSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M4 2h16a1 1 0 0 1 1 1v5a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1zm0 8h16a1 1 0 0 1 1 1v2a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1v-2a1 1 0 0 1 1-1zm0 5h16a1 1 0 0 1 1 1v5a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1v-5a1 1 0 0 1 1-1zm1.5-10.5v2h9v-2zm0 13v2h9v-2z"/>
    <circle cx="17.5" cy="5.5" r="1.2"/>
    <circle cx="17.5" cy="18.5" r="1.2"/>
  </g>
</svg>`;

export const rackIcon = new LabIcon({
  name: 'diamond-jupyter:rack',
  svgstr: rackSvg
});
